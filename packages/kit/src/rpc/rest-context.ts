import type { DescMethod, DescService } from "@bufbuild/protobuf";
import { type ContextValues, createContextValues, type HandlerContext } from "@connectrpc/connect";
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
  /** The headers the handler set, if it touched `responseHeader` at all. */
  responseHeader(): Headers | undefined;
  /** Aborts `context.signal` as Connect does when a call completes, and stops watching the client. */
  complete(): void;
}

// Connect aborts a finished call's signal; without a reason, every call would build a
// DOMException with a stack trace (~2% of a small request's CPU).
const callCompleted = new Error("call completed");

/**
 * A Connect HandlerContext for a REST call, so one implementation serves both transports: same
 * headers, descriptors and context values, and a signal that fires when the client goes away.
 *
 * Connect's own `createHandlerContext` builds two linked AbortControllers and three Headers for
 * every call (~5% of a small call's CPU, and garbage that shows in GC pauses), while most
 * handlers read none of them; here each is built the first time a handler reads it.
 */
class LazyRestContext implements HandlerContext {
  readonly service: DescService;
  readonly method: DescMethod;
  readonly protocolName = restProtocolName;
  readonly requestMethod: string;
  #request: FastifyRequest;
  #values: ContextValues | undefined;
  #controller: AbortController | undefined;
  /** Why the call ended (client gone, or completed) before anyone asked for the signal. */
  #endedBy: Error | undefined;
  #requestHeader: Headers | undefined;
  #responseHeader: Headers | undefined;
  #responseTrailer: Headers | undefined;

  constructor(options: RestHandlerContextOptions) {
    this.service = options.service;
    this.method = options.method;
    this.requestMethod = options.request.method;
    this.#request = options.request;
    this.#values = options.contextValues;
  }

  get url(): string {
    const request = this.#request;
    return `${request.protocol}://${request.host}${request.url}`;
  }

  get values(): ContextValues {
    this.#values ??= createContextValues();
    return this.#values;
  }

  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#endedBy) this.#controller.abort(this.#endedBy);
    }
    return this.#controller.signal;
  }

  get requestHeader(): Headers {
    this.#requestHeader ??= new Headers(toHeaders(this.#request.headers));
    return this.#requestHeader;
  }

  get responseHeader(): Headers {
    this.#responseHeader ??= new Headers();
    return this.#responseHeader;
  }

  get responseTrailer(): Headers {
    this.#responseTrailer ??= new Headers();
    return this.#responseTrailer;
  }

  timeoutMs(): number | undefined {
    return undefined;
  }

  end(reason: Error): void {
    if (this.#endedBy) return;
    this.#endedBy = reason;
    this.#controller?.abort(reason);
  }

  responseHeaderIfUsed(): Headers | undefined {
    return this.#responseHeader;
  }
}

export function createRestHandlerContext(options: RestHandlerContextOptions): RestHandlerContext {
  const { reply } = options;
  const context = new LazyRestContext(options);
  const onClose = () => {
    if (!reply.raw.writableFinished) context.end(new Error("client closed the connection"));
  };
  reply.raw.once("close", onClose);
  return {
    context,
    responseHeader: () => context.responseHeaderIfUsed(),
    complete() {
      reply.raw.off("close", onClose);
      context.end(callCompleted);
    },
  };
}

/** Header pairs for the Headers constructor (one copy of Node's header object, not two). */
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
