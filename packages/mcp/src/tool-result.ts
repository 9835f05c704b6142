import {
  AtriumHttpError,
  AttentionRequiredError,
  ConnectionNotActiveError,
  ConnectionRevokedError,
} from "@atrium/sdk";
import { type CallToolResult, ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";

/** A refusal or failure a tool reports to the model in words it can pass on to its user. */
export class McpToolError extends Error {}

/** Structured content for programs, the same as JSON text for clients that only read text. */
export function toolResult(structured: Record<string, unknown>): CallToolResult {
  return {
    structuredContent: structured,
    content: [{ type: "text", text: JSON.stringify(structured) }],
  };
}

/**
 * The one place errors become tool results. Connection states get sentences a model can explain;
 * other service answers keep their message (service bodies never carry secrets); anything else is
 * reported without internals.
 */
export function toolError(error: unknown): CallToolResult {
  return { isError: true, content: [{ type: "text", text: describe(error) }] };
}

/**
 * Runs a tool body; whatever it throws becomes a tool error, unexpected ones are also logged.
 * A URL elicitation is the one protocol answer a tool gives (see consent.ts): the SDK sends it
 * as the JSON-RPC error it is.
 */
export async function guarded(
  where: string,
  onError: (error: unknown, where: string) => void,
  run: () => Promise<CallToolResult>,
): Promise<CallToolResult> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof McpError && error.code === ErrorCode.UrlElicitationRequired) throw error;
    if (!(error instanceof McpToolError) && !(error instanceof AtriumHttpError)) {
      onError(error, where);
    }
    return toolError(error);
  }
}

function describe(error: unknown): string {
  if (error instanceof McpToolError) return error.message;
  if (error instanceof AttentionRequiredError) {
    return `Connection ${error.connectionId} needs attention: the provider refused to renew its access (the consent expired, was withdrawn, or needs MFA). Retrying will not help; ask the user to reconnect this account in Atrium.`;
  }
  if (error instanceof ConnectionRevokedError) {
    return `Connection ${error.connectionId} was revoked, so its credential no longer exists. Ask the user to connect the account again if they want this call made.`;
  }
  if (error instanceof ConnectionNotActiveError) {
    return `Connection ${error.connectionId} is not active (it failed to connect). Ask the user to reconnect the account in Atrium.`;
  }
  if (error instanceof AtriumHttpError) {
    if (error.status === 404) return `Not found: ${error.message}`;
    return `The Atrium service answered ${error.status}: ${error.message}`;
  }
  if (error instanceof Error && (error.name === "AbortError" || error.name === "TimeoutError")) {
    return "The call was cancelled or timed out before an answer arrived.";
  }
  return "The call failed inside Atrium; the operator can find the details in the gateway log.";
}
