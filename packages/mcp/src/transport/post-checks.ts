import type { IncomingHttpHeaders } from "node:http";
import { MAX_BATCH_SIZE } from "@modelcontextprotocol/sdk/server/requestBody.js";
import { isJsonContentType } from "@modelcontextprotocol/sdk/shared/mediaType.js";
import {
  ErrorCode,
  isInitializeRequest,
  type JSONRPCMessage,
  JSONRPCMessageSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/sdk/types.js";
import { supportedProtocolVersions } from "./stateless-lifecycle.js";

/** A POST refused before any message runs: its HTTP status and JSON-RPC error. */
export interface PostRefusal {
  status: number;
  code: number;
  message: string;
}

// The Streamable HTTP checks of a POST, as the SDK's transport makes them and with its words and
// statuses (its own constants and parsers are used).

/** Accept and Content-Type. */
export function checkPostHeaders(headers: IncomingHttpHeaders): PostRefusal | undefined {
  const accept = headers.accept ?? "";
  if (!accept.includes("application/json") || !accept.includes("text/event-stream")) {
    return {
      status: 406,
      code: -32000,
      message: "Not Acceptable: Client must accept both application/json and text/event-stream",
    };
  }
  if (!isJsonContentType(headers["content-type"] ?? null)) {
    return {
      status: 415,
      code: -32000,
      message: "Unsupported Media Type: Content-Type must be application/json",
    };
  }
  return undefined;
}

/** Batch size, message shape, and one initialize alone. */
export function parseMessages(body: unknown): { messages: JSONRPCMessage[] } | PostRefusal {
  if (Array.isArray(body) && body.length > MAX_BATCH_SIZE) {
    return {
      status: 400,
      code: ErrorCode.InvalidRequest,
      message: `Invalid Request: Batch must not exceed ${MAX_BATCH_SIZE} messages`,
    };
  }
  const parsed = (Array.isArray(body) ? body : [body]).map((message) =>
    JSONRPCMessageSchema.safeParse(message),
  );
  if (parsed.some((result) => !result.success)) {
    return {
      status: 400,
      code: ErrorCode.ParseError,
      message: "Parse error: Invalid JSON-RPC message",
    };
  }
  const messages = parsed.map((result) => result.data as JSONRPCMessage);
  // The method first: the SDK's guard is a whole schema parse, on every message of every call.
  if (messages.some((m) => "method" in m && m.method === "initialize" && isInitializeRequest(m))) {
    if (messages.length > 1) {
      return {
        status: 400,
        code: ErrorCode.InvalidRequest,
        message: "Invalid Request: Only one initialization request is allowed",
      };
    }
  }
  return { messages };
}

/**
 * A supported MCP-Protocol-Version on anything but initialize, for the revisions up to
 * 2025-11-25 (2026-07-28 has checks of its own: stateless-lifecycle.ts).
 */
export function checkProtocolVersion(
  headers: IncomingHttpHeaders,
  messages: JSONRPCMessage[],
): PostRefusal | undefined {
  if (messages.some((m) => "method" in m && m.method === "initialize")) return undefined;
  const version = headers["mcp-protocol-version"];
  if (typeof version === "string" && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
    return {
      status: 400,
      code: -32000,
      message: `Bad Request: Unsupported protocol version: ${version} (supported versions: ${supportedProtocolVersions.join(", ")})`,
    };
  }
  return undefined;
}
