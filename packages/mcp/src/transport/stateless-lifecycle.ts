import type { IncomingHttpHeaders } from "node:http";
import {
  ErrorCode,
  type JSONRPCMessage,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/sdk/types.js";

// MCP 2026-07-28 (SEP-2575, SEP-2243, SEP-2549): no initialize, no session. Every request names
// its protocol version and the client's capabilities in `_meta`, mirrors its method (and the
// tool, prompt or resource it is about) in headers for intermediaries, and a client learns what
// the server offers with `server/discover`. The SDK (1.x) implements revisions up to 2025-11-25;
// what this revision changes on the wire is checked and added here, around the SDK's server.

export const STATELESS_PROTOCOL_VERSION = "2026-07-28";

/** Every revision /mcp speaks, newest first. */
export const supportedProtocolVersions = [
  STATELESS_PROTOCOL_VERSION,
  ...SUPPORTED_PROTOCOL_VERSIONS,
];

export const metaKeys = {
  protocolVersion: "io.modelcontextprotocol/protocolVersion",
  clientCapabilities: "io.modelcontextprotocol/clientCapabilities",
  serverInfo: "io.modelcontextprotocol/serverInfo",
} as const;

/** The revision's own JSON-RPC errors. */
export const StatelessErrorCode = {
  HeaderMismatch: -32020,
  MissingRequiredClientCapability: -32021,
  UnsupportedProtocolVersion: -32022,
} as const;

/** The methods of the stateful lifecycle, which this revision removed. */
const removedMethods = new Set([
  "initialize",
  "ping",
  "logging/setLevel",
  "resources/subscribe",
  "resources/unsubscribe",
]);

/** Results a client may cache (SEP-2549), and for how long and with whom. */
const cacheHints: Record<string, { ttlMs: number; cacheScope: "public" | "private" }> = {
  // The same for every caller of a gateway (its scope decides what the tools reach, not which
  // tools there are), and fixed until the gateway restarts.
  "server/discover": { ttlMs: 300_000, cacheScope: "public" },
  "tools/list": { ttlMs: 300_000, cacheScope: "public" },
  "resources/templates/list": { ttlMs: 300_000, cacheScope: "public" },
  // The user's own memory: changes with every turn they store.
  "resources/list": { ttlMs: 0, cacheScope: "private" },
  "resources/read": { ttlMs: 0, cacheScope: "private" },
};

/** The params field a method's Mcp-Name header mirrors (SEP-2243; SEP-2663 for tasks). */
const namedBy: Record<string, "name" | "uri" | "taskId"> = {
  "tools/call": "name",
  "prompts/get": "name",
  "resources/read": "uri",
  "tasks/get": "taskId",
  "tasks/update": "taskId",
  "tasks/cancel": "taskId",
};

/** HTTP statuses of the refusals the revision gives one (any other error is 200). */
const refusalStatus: Record<number, number> = {
  [ErrorCode.MethodNotFound]: 404,
  [StatelessErrorCode.MissingRequiredClientCapability]: 400,
};

interface MessageLike {
  id?: string | number;
  method?: string;
  params?: { name?: unknown; uri?: unknown; taskId?: unknown; _meta?: Record<string, unknown> };
}

/** A request refused before the server sees it: its HTTP status and JSON-RPC error. */
export interface StatelessRefusal {
  status: number;
  code: number;
  message: string;
  data?: unknown;
}

const headerOf = (headers: IncomingHttpHeaders, name: string): string | undefined => {
  const value = headers[name];
  return (Array.isArray(value) ? value[0] : value)?.trim();
};

/** A header value as SEP-2243 carries non-ASCII text: `=?base64?<base64 of UTF-8>?=`. */
function decodeHeaderValue(value: string): string {
  const wrapped = /^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$/.exec(value);
  return wrapped ? Buffer.from(wrapped[1], "base64").toString("utf8") : value;
}

/**
 * Whether a POST speaks 2026-07-28: its MCP-Protocol-Version header names it, or (an unknown or
 * missing header) its messages carry the revision's `_meta`. Older clients send neither.
 */
export function speaksStatelessLifecycle(headers: IncomingHttpHeaders, body: unknown): boolean {
  const version = headerOf(headers, "mcp-protocol-version");
  if (version === STATELESS_PROTOCOL_VERSION) return true;
  if (version !== undefined && SUPPORTED_PROTOCOL_VERSIONS.includes(version)) return false;
  return (Array.isArray(body) ? body : [body]).some(
    (message) =>
      typeof message === "object" &&
      message !== null &&
      (message as MessageLike).params?._meta?.[metaKeys.protocolVersion] !== undefined,
  );
}

/**
 * The checks 2026-07-28 makes of a request before it runs, in the order that names the first
 * thing wrong: the version (400, -32022 with the supported ones), a removed method (404,
 * -32601), the routing headers (400, -32020), the `_meta` fields (400, -32602), and the header's
 * version against `_meta`'s (400, -32020).
 */
export function checkStatelessRequest(
  headers: IncomingHttpHeaders,
  message: JSONRPCMessage,
): StatelessRefusal | undefined {
  const { method, params } = message as MessageLike;
  const version = headerOf(headers, "mcp-protocol-version");
  if (version === undefined) {
    return {
      status: 400,
      code: StatelessErrorCode.HeaderMismatch,
      message: "Header mismatch: the MCP-Protocol-Version header is required",
    };
  }
  if (!supportedProtocolVersions.includes(version)) {
    return {
      status: 400,
      code: StatelessErrorCode.UnsupportedProtocolVersion,
      message: `Unsupported protocol version: ${version}`,
      data: { supported: supportedProtocolVersions, requested: version },
    };
  }
  // Responses and notifications carry no routing headers or client state to check.
  if (method === undefined || !("id" in message)) return undefined;
  if (removedMethods.has(method)) {
    return {
      status: 404,
      code: ErrorCode.MethodNotFound,
      message: `Method not found: ${method} is not part of MCP ${STATELESS_PROTOCOL_VERSION}`,
    };
  }
  const methodHeader = headerOf(headers, "mcp-method");
  if (methodHeader !== method) {
    return {
      status: 400,
      code: StatelessErrorCode.HeaderMismatch,
      message:
        methodHeader === undefined
          ? "Header mismatch: the Mcp-Method header is required"
          : `Header mismatch: Mcp-Method ${methodHeader} is not the request's method ${method}`,
    };
  }
  const field = namedBy[method];
  const named = field && params?.[field];
  if (field !== undefined && named !== undefined) {
    const nameHeader = headerOf(headers, "mcp-name");
    if (nameHeader === undefined || decodeHeaderValue(nameHeader) !== named) {
      return {
        status: 400,
        code: StatelessErrorCode.HeaderMismatch,
        message:
          nameHeader === undefined
            ? `Header mismatch: the Mcp-Name header is required (params.${field})`
            : `Header mismatch: Mcp-Name is not the request's params.${field}`,
      };
    }
  }
  const meta = params?._meta;
  const missing = [metaKeys.protocolVersion, metaKeys.clientCapabilities].filter(
    (key) => meta?.[key] === undefined,
  );
  if (missing.length > 0) {
    return {
      status: 400,
      code: ErrorCode.InvalidParams,
      message: `Invalid params: params._meta must have ${missing.join(" and ")}`,
    };
  }
  if (meta?.[metaKeys.protocolVersion] !== version) {
    return {
      status: 400,
      code: StatelessErrorCode.HeaderMismatch,
      message: `Header mismatch: MCP-Protocol-Version ${version} is not params._meta's ${String(meta?.[metaKeys.protocolVersion])}`,
    };
  }
  return undefined;
}

/**
 * An answer as 2026-07-28 shapes it: every result says it is complete (there are no partial
 * ones here), cacheable ones carry their hints, and the HTTP status follows a refusal (a method
 * the server does not have is 404).
 */
export function statelessAnswer(
  request: JSONRPCMessage,
  response: JSONRPCMessage,
): { status: number; message: JSONRPCMessage } {
  const { method, params } = request as MessageLike;
  if ("error" in response) {
    const { error } = response;
    // SEP-2164: a resource that is not there is invalid params naming its URI.
    const unknownResource =
      method === "resources/read" &&
      error.code === ErrorCode.InvalidParams &&
      error.data === undefined &&
      typeof params?.uri === "string";
    return {
      status: refusalStatus[error.code] ?? 200,
      message: unknownResource
        ? { ...response, error: { ...error, data: { uri: params?.uri } } }
        : response,
    };
  }
  if (!("result" in response)) return { status: 200, message: response };
  const hints = method === undefined ? undefined : cacheHints[method];
  return {
    status: 200,
    message: { ...response, result: { resultType: "complete", ...hints, ...response.result } },
  };
}
