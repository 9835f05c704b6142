import type { IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import { createServerPool } from "../server-pool.js";
import { authInfoFor, type ToolContext } from "../tool-context.js";

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
  params?: {
    requestId?: string | number;
    reason?: string;
    name?: unknown;
    arguments?: unknown;
    _meta?: { progressToken?: string | number };
  };
}

const isPlainObject = (value: unknown) =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * What is wrong with a tools/call's params, if anything. The SDK answers these with an internal
 * error (-32603) carrying a schema dump; a caller's mistake is invalid params (-32602), in words.
 */
function toolCallProblem(message: JsonRpcLike): string | undefined {
  if (message.method !== "tools/call") return undefined;
  const params: unknown = message.params;
  if (!isPlainObject(params)) return "params must be an object with name and arguments";
  const { name, arguments: args } = params as { name?: unknown; arguments?: unknown };
  if (typeof name !== "string") return "params.name must be the tool's name, a string";
  if (args !== undefined && !isPlainObject(args)) return "params.arguments must be an object";
  return undefined;
}

/**
 * Streamable HTTP in stateless mode: every POST gets its own transport and, for its duration, a
 * server of its own (one the same caller left idle, or a new one; a server holds no request's
 * data), so any gateway instance can answer any request and no session is kept. What stateless
 * mode loses is the SDK's own routing of `notifications/cancelled` (it arrives in a later POST,
 * at another server): this handler keeps the calls in flight on this instance and aborts the
 * matching one, and a client that closes the response stream aborts its calls too.
 */
export function createMcpHttpHandler(): McpHttpHandler {
  const servers = createServerPool({ maxIdlePerCaller: 4, maxCallers: 256 });
  const inFlight = new Map<string, AbortController>();
  const keyOf = (callerKey: string, id: string | number) =>
    `${callerKey}\u0000${JSON.stringify(id)}`;

  return {
    async handle(req, res, body, call) {
      const messages = (Array.isArray(body) ? body : [body]) as JsonRpcLike[];
      const problems = messages.map((message) =>
        isPlainObject(message) ? toolCallProblem(message) : undefined,
      );
      if (problems.some((problem) => problem !== undefined)) {
        // Nothing of a batch runs when part of it is refused, and every request hears why.
        const errors = messages
          .map((message, i) => ({ id: isPlainObject(message) ? message.id : undefined, i }))
          .filter(({ id, i }) => id !== undefined || problems[i] !== undefined)
          .map(({ id, i }) => ({
            jsonrpc: "2.0",
            id: id ?? null,
            error: problems[i]
              ? { code: ErrorCode.InvalidParams, message: `Invalid params: ${problems[i]}` }
              : {
                  code: ErrorCode.InvalidRequest,
                  message: "Not run: another message of this batch has invalid params",
                },
          }));
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(Array.isArray(body) ? errors : errors[0]));
        return;
      }
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
      const context: ToolContext = {
        ...call.context,
        cancelled: (id) => mine.find(([key]) => key === keyOf(call.callerKey, id))?.[1].signal,
      };
      const serverOptions = { limits: call.context.limits };
      const server = servers.acquire(call.callerKey, serverOptions);
      // A server that saw initialize holds that client's capabilities; it is not handed on.
      const initializes = messages.some((message) => message?.method === "initialize");
      // A call that asked for progress is answered as an SSE stream so its notifications can go
      // first; any other is one JSON body, which spares both sides the stream's framing.
      const wantsProgress = messages.some(
        (message) => message?.params?._meta?.progressToken !== undefined,
      );
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: !wantsProgress,
      });
      res.on("close", () => {
        for (const [key, controller] of mine) {
          if (!res.writableFinished) controller.abort("the client closed the stream");
          // Two clients of one key may reuse an id; only this request's entry is removed.
          if (inFlight.get(key) === controller) inFlight.delete(key);
        }
        // A finished answer means every handler of the request has returned, so the server can
        // take the caller's next request; one the client left may still run a handler, and
        // is dropped once closed (its handlers are aborted and their answers go nowhere).
        const reusable = res.writableFinished && !initializes;
        server.close().then(
          () => {
            if (reusable) servers.release(call.callerKey, serverOptions, server);
          },
          () => undefined,
        );
      });
      await server.connect(transport);
      const answer = await transport.handleRequest(webRequest(req), {
        parsedBody: body,
        authInfo: authInfoFor(call.callerKey, context),
      });
      await writeAnswer(answer, res);
    },
  };
}

/**
 * The request as the SDK's web-standard transport reads it: method, URL and headers. The body is
 * already parsed (the host did it), so none is attached. Built here rather than by the SDK's Node
 * wrapper, whose generic Node-to-Fetch bridge costs more than the rest of a call.
 */
function webRequest(req: IncomingMessage): Request {
  // The raw header pairs as received: cheaper to hand over than Node's parsed header object.
  const headers: [string, string][] = [];
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    headers.push([req.rawHeaders[i], req.rawHeaders[i + 1]]);
  }
  return new Request(new URL(req.url ?? "/mcp", "http://mcp.invalid"), {
    method: req.method,
    headers,
  });
}

/** Writes the transport's answer: one JSON body, or an SSE stream forwarded as it is produced. */
async function writeAnswer(answer: Response, res: ServerResponse): Promise<void> {
  const headers: Record<string, string> = {};
  answer.headers.forEach((value, name) => {
    headers[name] = value;
  });
  res.writeHead(answer.status, headers);
  if (answer.body === null) {
    res.end();
    return;
  }
  if (!headers["content-type"]?.startsWith("text/event-stream")) {
    res.end(Buffer.from(await answer.arrayBuffer()));
    return;
  }
  res.flushHeaders();
  const stream = Readable.fromWeb(answer.body as import("node:stream/web").ReadableStream);
  res.on("close", () => stream.destroy());
  await new Promise<void>((resolve) => {
    stream.on("error", () => resolve());
    stream.on("end", () => {
      res.end();
      resolve();
    });
    stream.pipe(res, { end: false });
  });
}
