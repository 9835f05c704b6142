import type { ChatClient, ConnectionTokens, MemoryClient } from "@atrium/sdk";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import type { MemorySessions } from "./memory-sessions.js";
import type { McpScope } from "./scope.js";

export interface HttpRequestLimits {
  /** Longest a credentialed call may take, redirects included. */
  timeoutMs: number;
  /** Response bodies are cut here and marked truncated. */
  maxResponseBytes: number;
  /** Redirects followed within the provider's origin; one off it is refused. */
  maxRedirects: number;
}

/** One credentialed call as the operator's log records it: never a credential, never a query. */
export interface CredentialedCallRecord {
  connectionId: string;
  method: string;
  /** The requested URL or path without its query string. */
  target: string;
  /** The provider's HTTP status, or why no answer came back. */
  outcome: number | "refused" | "failed";
}

/** What every tool and resource of one MCP server works with; the scope comes from the key. */
export interface ToolContext {
  scope: McpScope;
  memory: MemoryClient;
  sessions: MemorySessions;
  chat: ChatClient;
  /**
   * Tokens of the workspace's connections, read for this caller by the gateway's own handlers in
   * process (no HTTP, no key): what credentialed calls inject.
   */
  connections: ConnectionTokens;
  /** The provider's api_base_url of a connection of the workspace (404 for any other). */
  apiBaseUrl(connectionId: string, workspaceId: string, signal?: AbortSignal): Promise<string>;
  limits: HttpRequestLimits;
  /** Extra cancellation beyond the MCP request's own (a cancel that reached another server). */
  cancelled(requestId: string | number): AbortSignal | undefined;
  /** Told about every credentialed call, refused ones included (the gateway logs it). */
  recordCall(record: CredentialedCallRecord): void;
  /** Told about failures the model only sees as a generic message. */
  onError(error: unknown, where: string): void;
}

/** The MCP request's signal joined with any cancellation delivered out of band. */
export function callSignal(
  context: ToolContext,
  extra: { signal: AbortSignal; requestId: string | number },
): AbortSignal {
  const other = context.cancelled(extra.requestId);
  return other ? AbortSignal.any([extra.signal, other]) : extra.signal;
}

/** Where a request's tool context travels: its auth info, which the SDK hands to every handler. */
const contextKey = "atriumToolContext";

/**
 * The auth info a transport passes with one request's messages. The context rides in the SDK's
 * per-request `extra` rather than in the server, so one server (reused between requests) never
 * holds a caller's scope: every handler reads the scope of the request it is answering.
 */
export function authInfoFor(callerKey: string, context: ToolContext): AuthInfo {
  return { token: "", clientId: callerKey, scopes: [], extra: { [contextKey]: context } };
}

/** The tool context of the request a handler is answering (see `authInfoFor`). */
export function contextOf(extra: { authInfo?: AuthInfo }): ToolContext {
  const context = extra.authInfo?.extra?.[contextKey] as ToolContext | undefined;
  // Only a transport that skipped authInfoFor gets here: a wiring mistake, never a caller's.
  if (context === undefined) throw new Error("MCP request without an Atrium tool context");
  return context;
}
