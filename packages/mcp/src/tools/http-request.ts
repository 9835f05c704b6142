import { type ConnectionToken, createCredentialFetcher } from "@atrium/sdk";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { clientCapabilitiesOf, consentAnswer, consentItemsOfError } from "../consent.js";
import {
  type CredentialedCallRecord,
  callSignal,
  contextOf,
  type HttpRequestLimits,
} from "../tool-context.js";
import { guarded, McpToolError, toolResult } from "../tool-result.js";
import { type CredentialedResponse, credentialedFetch } from "./credentialed-fetch.js";

/**
 * Secret values of a connection. A provider that echoes a request (debug endpoints, error pages)
 * would otherwise hand the credential to the model; every copy is masked before the model sees
 * the answer.
 */
function secretsOf(token: ConnectionToken): string[] {
  return [token.access_token, token.api_key, token.password, token.id_token].filter(
    (value): value is string => typeof value === "string" && value.length >= 4,
  );
}

function redact(response: CredentialedResponse, secrets: string[]): CredentialedResponse {
  const mask = (text: string) =>
    secrets.reduce((masked, secret) => masked.split(secret).join("[credential]"), text);
  return {
    ...response,
    url: mask(response.url),
    body: mask(response.body),
    headers: Object.fromEntries(
      Object.entries(response.headers).map(([name, value]) => [name, mask(value)]),
    ),
  };
}

const httpRequestInput = {
  connection_id: z.string().min(1).describe("The Atrium connection of the account to use."),
  method: z
    .enum(["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"])
    .default("GET")
    .describe("HTTP method."),
  url: z.string().min(1).describe("Path on the provider's API (or a full URL on its host)."),
  headers: z
    .record(z.string(), z.string())
    .optional()
    .describe("Extra request headers such as accept or content-type; no credentials."),
  body: z.string().optional().describe("Request body, for example JSON text."),
};

const httpRequestOutput = {
  status: z.number().int(),
  url: z.string(),
  headers: z.record(z.string(), z.string()),
  body: z.string(),
  truncated: z.boolean(),
};

/**
 * http_request: a call to a connected account's API with the credential injected by the SDK's
 * strategies (createFetcher), so the model names a connection and never holds a token.
 */
export function registerHttpRequestTool(server: McpServer, limits: HttpRequestLimits): void {
  server.registerTool(
    "http_request",
    {
      title: "Call a connected account's API",
      description:
        "Make an HTTP request to the API of an account the user connected in Atrium (for example " +
        "their GitHub or CRM). Atrium adds the account's credential itself: never put tokens or " +
        "keys in the request. Only the provider's own API host is allowed (url may be a path such " +
        "as /v1/me, resolved against it); other hosts and redirects to them are refused. " +
        `Responses over ${limits.maxResponseBytes} bytes are cut (truncated: true); calls time out ` +
        `after ${Math.round(limits.timeoutMs / 1000)} s. Returns {status, url, headers, body, ` +
        "truncated}; a binary body is given as base64:.... If the connection needs attention or " +
        "was revoked, the error says so: tell the user to reconnect the account; when Atrium can " +
        "offer the consent at once, the error carries its link (consent).",
      inputSchema: httpRequestInput,
      outputSchema: httpRequestOutput,
      annotations: { openWorldHint: true, destructiveHint: true },
    },
    (args, extra) => {
      const context = contextOf(extra);
      return guarded("http_request", context.onError, async () => {
        const signal = callSignal(context, extra);
        const workspaceId = context.scope.workspaceId;
        const record = (outcome: CredentialedCallRecord["outcome"]) =>
          context.recordCall({
            connectionId: args.connection_id,
            method: args.method,
            target: args.url.split("?")[0],
            outcome,
          });
        let response: CredentialedResponse;
        try {
          const apiBaseUrl = await context.apiBaseUrl(args.connection_id, workspaceId, signal);
          const fetcher = createCredentialFetcher(context.connections, args.connection_id, {
            workspaceId,
          });
          response = await credentialedFetch(
            fetcher,
            apiBaseUrl,
            {
              method: args.method,
              url: args.url,
              headers: args.headers ?? {},
              body: args.body,
            },
            limits,
            signal,
          );
        } catch (error) {
          record(error instanceof McpToolError ? "refused" : "failed");
          const consent = consentItemsOfError(error);
          if (consent.length === 0) throw error;
          return consentAnswer(consent, {
            capabilities: clientCapabilitiesOf(extra._meta, server.server.getClientCapabilities()),
            ref: args.connection_id,
            afterwards:
              "Once the account is connected, make the call again (with the connection id the user's new connection has, if it is another).",
          });
        }
        record(response.status);
        // The fetcher has just read the token, so this is answered from the request's cache.
        const token = await context.connections.getToken(args.connection_id, {
          workspaceId,
          signal,
        });
        return toolResult({ ...redact(response, secretsOf(token)) });
      });
    },
  );
}
