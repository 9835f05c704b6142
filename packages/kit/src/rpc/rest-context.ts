import type { DescMethod, DescService } from "@bufbuild/protobuf";
import { type ContextValues, createHandlerContext, type HandlerContext } from "@connectrpc/connect";
import type { FastifyReply, FastifyRequest } from "fastify";

/** The protocol name REST calls report in `HandlerContext.protocolName`. */
export const restProtocolName = "rest";

export interface RestHandlerContextOptions {
  service: DescService;
  method: DescMethod;
  request: FastifyRequest;
  reply: FastifyReply;
  contextValues: ContextValues | undefined;
}

export interface RestHandlerContext {
  readonly context: HandlerContext;
  /** Aborts `context.signal` as Connect does when a call completes, and stops watching the client. */
  complete(): void;
}

// Connect aborts a finished call's signal; without a reason, every call would build a
// DOMException with a stack trace (~2% of a small request's CPU).
const callCompleted = new Error("call completed");

/**
 * A real Connect HandlerContext for a REST call, so one implementation serves both transports:
 * same headers, descriptors and context values, and a signal that fires when the client goes away.
 */
export function createRestHandlerContext(options: RestHandlerContextOptions): RestHandlerContext {
  const { request, reply } = options;
  const context = createHandlerContext({
    service: options.service,
    method: options.method,
    protocolName: restProtocolName,
    requestMethod: request.method,
    url: `${request.protocol}://${request.host}${request.url}`,
    requestHeader: toHeaders(request.headers),
    contextValues: options.contextValues,
  });
  const onClose = () => {
    if (!reply.raw.writableFinished) context.abort(new Error("client closed the connection"));
  };
  reply.raw.once("close", onClose);
  return {
    context,
    complete() {
      reply.raw.off("close", onClose);
      context.abort(callCompleted);
    },
  };
}

/** Header pairs for Connect, which builds its own Headers from them (one copy, not two). */
function toHeaders(incoming: FastifyRequest["headers"]): [string, string][] {
  const pairs: [string, string][] = [];
  for (const [name, value] of Object.entries(incoming)) {
    // HTTP/2 pseudo-headers (":path") are not valid header names.
    if (value === undefined || name.startsWith(":")) continue;
    if (Array.isArray(value)) for (const item of value) pairs.push([name, item]);
    else pairs.push([name, value]);
  }
  return pairs;
}
