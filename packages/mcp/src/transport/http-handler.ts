import type { IncomingMessage, ServerResponse } from "node:http";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { createAtriumMcpServer } from "../create-mcp-server.js";
import type { ToolContext } from "../tool-context.js";

export interface McpHttpCall {
  /** The tool context of this caller (its scope and backends acting with its key). */
  context: Omit<ToolContext, "cancelled">;
  /**
   * Identifies the caller's key (a digest, never the key). Cancellations are matched by it and
   * the JSON-RPC id, so one key can never cancel another key's calls.
   */
  callerKey: string;
}

export interface McpHttpHandler {
  /** Serves one POST /mcp whose JSON body the host has already parsed. */
  handle(
    req: IncomingMessage,
    res: ServerResponse,
    body: unknown,
    call: McpHttpCall,
  ): Promise<void>;
}

interface JsonRpcLike {
  id?: string | number;
  method?: string;
  params?: { requestId?: string | number; reason?: string };
}

/**
 * Streamable HTTP in stateless mode: every POST gets its own server and transport, so any gateway
 * instance can answer any request and nothing is kept between requests. What stateless mode loses
 * is the SDK's own routing of `notifications/cancelled` (it arrives in a later POST, at a fresh
 * server): this handler keeps the calls in flight on this instance and aborts the matching one,
 * and a client that closes the response stream aborts its calls too.
 */
export function createMcpHttpHandler(): McpHttpHandler {
  const inFlight = new Map<string, AbortController>();
  const keyOf = (callerKey: string, id: string | number) =>
    `${callerKey}\u0000${JSON.stringify(id)}`;

  return {
    async handle(req, res, body, call) {
      const messages = (Array.isArray(body) ? body : [body]) as JsonRpcLike[];
      const mine: [string, AbortController][] = [];
      for (const message of messages) {
        if (typeof message !== "object" || message === null) continue;
        if (
          message.method === "notifications/cancelled" &&
          message.params?.requestId !== undefined
        ) {
          inFlight
            .get(keyOf(call.callerKey, message.params.requestId))
            ?.abort(message.params.reason);
        } else if (message.method !== undefined && message.id !== undefined) {
          const key = keyOf(call.callerKey, message.id);
          const controller = new AbortController();
          inFlight.set(key, controller);
          mine.push([key, controller]);
        }
      }
      const server = createAtriumMcpServer({
        ...call.context,
        cancelled: (id) => mine.find(([key]) => key === keyOf(call.callerKey, id))?.[1].signal,
      });
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on("close", () => {
        for (const [key, controller] of mine) {
          if (!res.writableFinished) controller.abort("the client closed the stream");
          // Two clients of one key may reuse an id; only this request's entry is removed.
          if (inFlight.get(key) === controller) inFlight.delete(key);
        }
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
    },
  };
}
