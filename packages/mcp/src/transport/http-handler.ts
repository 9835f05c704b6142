import type { IncomingMessage, ServerResponse } from "node:http";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import {
  armSseKeepAlive,
  DEFAULT_SSE_KEEP_ALIVE_MS,
} from "@modelcontextprotocol/sdk/server/sseKeepAlive.js";
import { ErrorCode, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { type AtriumMcpServerOptions, createAtriumMcpServer } from "../create-mcp-server.js";
import { createServerPool } from "../server-pool.js";
import { createAskTasks } from "../tasks/ask-tasks.js";
import { authInfoFor, type ToolContext } from "../tool-context.js";
import { type Cancellation, createCancellation } from "./cancellation.js";
import {
  createExchangeTransport,
  type ExchangeSink,
  type ExchangeTransport,
} from "./exchange-transport.js";
import {
  checkPostHeaders,
  checkProtocolVersion,
  type PostRefusal,
  parseMessages,
} from "./post-checks.js";
import {
  checkStatelessRequest,
  speaksStatelessLifecycle,
  statelessAnswer,
} from "./stateless-lifecycle.js";

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

/** A server and the transport it stays connected to while pooled. */
interface ConnectedServer {
  server: McpServer;
  transport: ExchangeTransport;
}

function connectServer(options: AtriumMcpServerOptions): ConnectedServer {
  const server = createAtriumMcpServer(options);
  const transport = createExchangeTransport();
  // The transport's start() is synchronous in effect: the server is connected when this returns.
  void server.connect(transport);
  return { server, transport };
}

const sseHeaders = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache, no-transform",
  connection: "keep-alive",
  "x-accel-buffering": "no",
};

const sseEvent = (message: JSONRPCMessage) =>
  `event: message\ndata: ${JSON.stringify(message)}\n\n`;

function writeJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

const refuse = (
  res: ServerResponse,
  refusal: PostRefusal & { data?: unknown },
  id: string | number | null = null,
) =>
  writeJson(res, refusal.status, {
    jsonrpc: "2.0",
    error: { code: refusal.code, message: refusal.message, data: refusal.data },
    id,
  });

/**
 * Streamable HTTP in stateless mode: every POST is served, for its duration, by a server of its
 * own (one the same caller left idle, or a new one; a server holds no request's data), so any
 * gateway instance can answer any request and no session is kept. What stateless mode loses is
 * the SDK's own routing of `notifications/cancelled` (it arrives in a later POST, at another
 * server): this handler keeps the calls in flight on this instance and aborts the matching one,
 * and a client that closes the response stream aborts its calls too.
 */
export function createMcpHttpHandler(): McpHttpHandler {
  const servers = createServerPool({
    maxIdlePerCaller: 4,
    maxCallers: 256,
    build: connectServer,
  });
  const tasks = createAskTasks();
  const inFlight = new Map<string, Cancellation>();
  const keyOf = (callerKey: string, id: string | number) =>
    `${callerKey}\u0000${JSON.stringify(id)}`;

  return {
    async handle(req, res, body, call) {
      const refusal = checkPostHeaders(req.headers);
      if (refusal) return refuse(res, refusal);
      // Before the SDK's message schema, which would call a malformed tools/call a parse error.
      const raw = (Array.isArray(body) ? body : [body]) as JsonRpcLike[];
      const problems = raw.map((message) =>
        isPlainObject(message) ? toolCallProblem(message) : undefined,
      );
      if (problems.some((problem) => problem !== undefined)) {
        // Nothing of a batch runs when part of it is refused, and every request hears why.
        const errors = raw
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
        writeJson(res, 200, Array.isArray(body) ? errors : errors[0]);
        return;
      }
      const parsed = parseMessages(body);
      if (!("messages" in parsed)) return refuse(res, parsed);
      const stateless = speaksStatelessLifecycle(req.headers, body);
      if (stateless) {
        if (Array.isArray(body)) {
          return refuse(res, {
            status: 400,
            code: ErrorCode.InvalidRequest,
            message: "Invalid Request: MCP 2026-07-28 has no batches; send one message per POST",
          });
        }
        const request = parsed.messages[0];
        const refusal = checkStatelessRequest(req.headers, request);
        if (refusal) return refuse(res, refusal, (body as JsonRpcLike).id ?? null);
        // The Tasks extension is served beside the SDK's server, which knows only 2025-11-25's.
        if (tasks.handles(request)) {
          const { status, message } = statelessAnswer(
            request,
            await tasks.answer(request, call.context),
          );
          return writeJson(res, status, message);
        }
      } else {
        const refusal = checkProtocolVersion(req.headers, parsed.messages);
        if (refusal) return refuse(res, refusal);
      }
      const messages = parsed.messages as JsonRpcLike[];
      const mine: [string, Cancellation][] = [];
      for (const message of messages) {
        if (
          message.method === "notifications/cancelled" &&
          message.params?.requestId !== undefined
        ) {
          inFlight
            .get(keyOf(call.callerKey, message.params.requestId))
            ?.cancel(message.params.reason);
        } else if (message.method !== undefined && message.id !== undefined) {
          const key = keyOf(call.callerKey, message.id);
          const cancellation = createCancellation();
          inFlight.set(key, cancellation);
          mine.push([key, cancellation]);
        }
      }
      const context: ToolContext = {
        ...call.context,
        cancelled: (id) => mine.find(([key]) => key === keyOf(call.callerKey, id))?.[1].signal(),
      };
      const serverOptions = { limits: call.context.limits };
      const connected = servers.acquire(call.callerKey, serverOptions);
      // A server that saw initialize holds that client's capabilities; it is not handed on.
      const initializes = messages.some((message) => message.method === "initialize");
      res.on("close", () => {
        for (const [key, cancellation] of mine) {
          if (!res.writableFinished) cancellation.cancel("the client closed the stream");
          // Two clients of one key may reuse an id; only this request's entry is removed.
          if (inFlight.get(key) === cancellation) inFlight.delete(key);
        }
        // A finished answer means every handler of the request has returned, so the server can
        // take the caller's next request; one the client left may still run a handler, and
        // is closed and dropped (its handlers are aborted and their answers go nowhere).
        if (res.writableFinished && !initializes) {
          servers.release(call.callerKey, serverOptions, connected);
        } else {
          connected.server.close().catch(() => undefined);
        }
      });
      // A call that asked for progress is answered as an SSE stream so its notifications can go
      // first; any other is one JSON body, which spares both sides the stream's framing. Only a
      // request (it has an id) can ask: notifications alone are answered 202 either way.
      const wantsProgress = messages.some(
        (message) => message.id !== undefined && message.params?._meta?.progressToken !== undefined,
      );
      const answer = wantsProgress ? sseAnswer(res) : jsonAnswer(res);
      const sink = stateless ? statelessSink(answer, parsed.messages[0]) : answer;
      // Settles when the answer is written, or when the client left before it was.
      await new Promise<void>((resolve) => {
        res.once("close", resolve);
        connected.transport.exchange(
          parsed.messages,
          {
            authInfo: authInfoFor(call.callerKey, context),
            requestInfo: { headers: req.headers, url: new URL(req.url ?? "/mcp", "http://mcp") },
          },
          {
            notify: sink.notify,
            answered(responses) {
              sink.answered(responses);
              resolve();
            },
          },
        );
      });
    },
  };
}

interface AnswerSink extends ExchangeSink {
  answered(responses: JSONRPCMessage[], status?: number): void;
}

/** One JSON body once every request is answered: the answer itself when there is one. */
function jsonAnswer(res: ServerResponse): AnswerSink {
  return {
    notify() {},
    answered(responses, status = 200) {
      if (responses.length === 0) {
        res.writeHead(202).end();
        return;
      }
      writeJson(res, status, responses.length === 1 ? responses[0] : responses);
    },
  };
}

/** The answer to a 2026-07-28 request (one per POST), shaped and given its status as it wants. */
function statelessSink(sink: AnswerSink, request: JSONRPCMessage): ExchangeSink {
  return {
    notify: sink.notify,
    answered(responses) {
      if (responses.length === 0) return sink.answered(responses);
      const { status, message } = statelessAnswer(request, responses[0]);
      sink.answered([message], status);
    },
  };
}

/** An SSE stream opened at once: notifications as they come, then the answers, then the end. */
function sseAnswer(res: ServerResponse): AnswerSink {
  res.writeHead(200, sseHeaders);
  res.flushHeaders();
  const keepAlive = armSseKeepAlive(DEFAULT_SSE_KEEP_ALIVE_MS, () => {
    if (!res.writableEnded) res.write(": keepalive\n\n");
  });
  res.on("close", () => clearInterval(keepAlive));
  return {
    notify(message) {
      if (!res.writableEnded) res.write(sseEvent(message));
    },
    answered(responses) {
      clearInterval(keepAlive);
      res.end(responses.map(sseEvent).join(""));
    },
  };
}
