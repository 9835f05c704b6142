import type { EventEmitter } from "node:events";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type {
  Http2SecureServer,
  Http2Server,
  IncomingHttpHeaders,
  ServerHttp2Stream,
} from "node:http2";
import type { Interceptor } from "@connectrpc/connect";
import {
  type Attributes,
  type Context,
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";
import type { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { ConfigError } from "../config/load-config.js";

// OpenTelemetry traces, configured by the standard OTEL_* variables and off unless an OTLP
// endpoint is set: then each service's REST and gRPC servers open a SERVER span per request
// (continuing a W3C `traceparent` the caller sent), and outbound calls (fetch, and gRPC through
// kit's client transport) open CLIENT spans and send `traceparent` on. Spans carry methods,
// routes, paths and status codes: never headers, query strings, bodies or URL credentials, so no
// key, token or message content. Off, nothing is wrapped and the API's tracers are no-ops.

export interface TracingOptions {
  /** `service.name` unless OTEL_SERVICE_NAME says otherwise (`atrium-memory`, or `atrium`). */
  serviceName: string;
  serviceVersion?: string;
  env?: NodeJS.ProcessEnv;
}

export interface Tracing {
  /** Sends what is buffered and stops; call once at exit. */
  shutdown(): Promise<void>;
}

let provider: NodeTracerProvider | undefined;

/** Whether the OTEL_* variables ask for traces (an endpoint, and not switched off). */
export function tracingRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_ENDPOINT;
  return (
    Boolean(endpoint?.trim()) &&
    env.OTEL_SDK_DISABLED?.trim().toLowerCase() !== "true" &&
    env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() !== "none"
  );
}

/** True once `startTracing` has started exporting in this process. */
export function tracingEnabled(): boolean {
  return provider !== undefined;
}

/** The OTLP/HTTP exporter OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL asks for (its URL, headers from OTEL_*). */
async function exporterFor(env: NodeJS.ProcessEnv) {
  const protocol = (
    env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ??
    env.OTEL_EXPORTER_OTLP_PROTOCOL ??
    "http/protobuf"
  ).trim();
  if (protocol === "http/protobuf") {
    return new (await import("@opentelemetry/exporter-trace-otlp-proto")).OTLPTraceExporter();
  }
  if (protocol === "http/json") {
    return new (await import("@opentelemetry/exporter-trace-otlp-http")).OTLPTraceExporter();
  }
  const name = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL
    ? "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
    : "OTEL_EXPORTER_OTLP_PROTOCOL";
  throw new ConfigError(`${name} must be http/protobuf or http/json (grpc is not supported)`);
}

/** Spans per OTLP export unless OTEL_BSP_MAX_EXPORT_BATCH_SIZE says otherwise (the SDK's is 512). */
export const DEFAULT_EXPORT_BATCH_SIZE = 128;

/**
 * The BatchSpanProcessor's settings: the SDK reads OTEL_BSP_* itself, and a batch is
 * DEFAULT_EXPORT_BATCH_SIZE spans unless OTEL_BSP_MAX_EXPORT_BATCH_SIZE is set (never more than
 * OTEL_BSP_MAX_QUEUE_SIZE). A batch is serialized at once when full: 512 spans' objects, alive
 * while they are encoded, were often caught by a young-generation GC, copied and promoted, which
 * cost a busy service 3 to 7 µs per request more than batches of 128 (bench/memory/otel-cost.ts).
 * The price: one batch is in flight at a time, so a batch of N spans and an export round trip of
 * R ms carry at most N / R spans per ms before the queue fills and spans are dropped.
 */
export function batchSettings(env: NodeJS.ProcessEnv): { maxExportBatchSize?: number } {
  if (env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE?.trim()) return {};
  const queue = Number(env.OTEL_BSP_MAX_QUEUE_SIZE?.trim() || Number.NaN);
  return {
    maxExportBatchSize:
      queue > 0 && queue < DEFAULT_EXPORT_BATCH_SIZE ? queue : DEFAULT_EXPORT_BATCH_SIZE,
  };
}

/**
 * Starts exporting traces when the OTEL_* variables ask for it (once per process: the services
 * of `atrium start` share it, each naming its spans' tracer), before the services are created.
 * Resolves to undefined when off; the SDK is loaded only then, so off costs no start-up time.
 */
export async function startTracing(options: TracingOptions): Promise<Tracing | undefined> {
  const env = options.env ?? process.env;
  if (provider || !tracingRequested(env)) return undefined;
  const [{ BatchSpanProcessor, NodeTracerProvider }, resources, { UndiciInstrumentation }] =
    await Promise.all([
      import("@opentelemetry/sdk-trace-node"),
      import("@opentelemetry/resources"),
      import("@opentelemetry/instrumentation-undici"),
    ]);
  const resource = resources
    .resourceFromAttributes({
      "service.name": options.serviceName,
      ...(options.serviceVersion ? { "service.version": options.serviceVersion } : {}),
    })
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const started = new NodeTracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor(await exporterFor(env), batchSettings(env))],
  });
  // The global tracer provider, AsyncLocalStorage context and the W3C trace context propagator.
  started.register();
  provider = started;
  const undici = new UndiciInstrumentation({
    // Background work (chain checks, sweeps) makes no root spans of its own.
    requireParentforSpans: true,
    // The query string and any user:password in the URL may carry credentials.
    startSpanHook: (request) => {
      const url = new URL(request.path, request.origin);
      return { "url.full": `${url.origin}${url.pathname}`, "url.query": "" };
    },
  });
  undici.enable();
  return {
    async shutdown() {
      undici.disable();
      provider = undefined;
      await started.shutdown();
    },
  };
}

function pathOf(url: string | undefined): string {
  if (!url) return "/";
  const query = url.indexOf("?");
  return query === -1 ? url : url.slice(0, query);
}

/**
 * Runs the listeners of every event `emitter` emits within `active` (a request's body arrives
 * from its socket, whose callbacks run outside the request's context). One wrapper of `emit`,
 * where the API's `context.bind` patches six methods and wraps each listener.
 */
function emitWithin(active: Context, emitter: EventEmitter): void {
  const emit = emitter.emit;
  emitter.emit = function (this: EventEmitter, ...args: Parameters<EventEmitter["emit"]>) {
    return context.with(active, () => emit.apply(this, args));
  };
}

/**
 * The SERVER span of a REST request, to name it by its route once routing has run: the active
 * span, as the request's hooks run inside its context (a WeakMap keyed by the request cost an
 * entry per request, which every young-generation GC then had to walk).
 */
export function restRequestSpan(): Span | undefined {
  return trace.getActiveSpan();
}

/**
 * A SERVER span around every request of an HTTP/1 server, the caller's `traceparent`
 * continued; the handlers, and the listeners of the request and response, run inside it.
 */
export function traceHttpServer(server: Server, tracerName: string): void {
  const tracer = trace.getTracer(tracerName);
  const listeners = server.listeners("request") as ((...args: unknown[]) => void)[];
  server.removeAllListeners("request");
  server.on("request", (request: IncomingMessage, response: ServerResponse) => {
    const parent = propagation.extract(ROOT_CONTEXT, request.headers);
    const span = tracer.startSpan(
      request.method ?? "HTTP",
      {
        kind: SpanKind.SERVER,
        attributes: {
          "http.request.method": request.method ?? "_OTHER",
          "url.path": pathOf(request.url),
          "url.scheme": "encrypted" in request.socket ? "https" : "http",
        },
      },
      parent,
    );
    // "close" comes once per response: `on` spares `once` its wrapper and the removal.
    response.on("close", () => {
      span.setAttribute("http.response.status_code", response.statusCode);
      if (response.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    });
    const active = trace.setSpan(parent, span);
    // A body's handler runs from the request's "end" event, outside this call.
    emitWithin(active, request);
    context.with(active, () => {
      for (const listener of listeners) listener.call(server, request, response);
    });
  });
}

/** `rpc.system` by content type: plain gRPC, gRPC-Web or Connect. */
function rpcSystem(contentType: string | undefined): string {
  if (contentType?.startsWith("application/grpc-web")) return "grpc_web";
  if (contentType?.startsWith("application/grpc")) return "grpc";
  return "connect_rpc";
}

/** A SERVER span around every stream of an HTTP/2 gRPC server (all of its 'stream' listeners). */
export function traceGrpcServer(server: Http2Server | Http2SecureServer, tracerName: string): void {
  const tracer = trace.getTracer(tracerName);
  const listeners = server.listeners("stream") as ((...args: unknown[]) => void)[];
  server.removeAllListeners("stream");
  server.on(
    "stream",
    (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, ...rest: unknown[]) => {
      const path = pathOf(headers[":path"]).replace(/^\//, "");
      const slash = path.lastIndexOf("/");
      const parent = propagation.extract(ROOT_CONTEXT, headers);
      const span = tracer.startSpan(
        path,
        {
          kind: SpanKind.SERVER,
          attributes: {
            "rpc.system": rpcSystem(headers["content-type"]),
            "rpc.service": path.slice(0, Math.max(slash, 0)),
            "rpc.method": path.slice(slash + 1),
          },
        },
        parent,
      );
      stream.once("close", () => {
        const status = stream.sentTrailers?.["grpc-status"] ?? stream.sentHeaders?.["grpc-status"];
        if (status !== undefined) {
          span.setAttribute("rpc.grpc.status_code", Number(status));
          if (Number(status) !== 0) span.setStatus({ code: SpanStatusCode.ERROR });
        } else {
          const httpStatus = Number(stream.sentHeaders?.[":status"] ?? 0);
          if (httpStatus) span.setAttribute("http.response.status_code", httpStatus);
          if (httpStatus >= 500 || httpStatus === 0) span.setStatus({ code: SpanStatusCode.ERROR });
        }
        span.end();
      });
      const active = trace.setSpan(parent, span);
      emitWithin(active, stream);
      context.with(active, () => {
        for (const listener of listeners) listener.call(server, stream, headers, ...rest);
      });
    },
  );
}

/**
 * A CLIENT span per outbound call of a Connect transport, sending `traceparent` on. A no-op
 * (the call passes through) while tracing is off.
 */
export function traceClientCalls(serverAddress: string): Interceptor {
  return (next) => async (request) => {
    if (!provider) return next(request);
    const service = request.service.typeName;
    const method = request.method.name;
    const span = trace.getTracer("atrium-rpc-client").startSpan(`${service}/${method}`, {
      kind: SpanKind.CLIENT,
      attributes: {
        "rpc.system": "grpc",
        "rpc.service": service,
        "rpc.method": method,
        "server.address": serverAddress,
      },
    });
    const active = trace.setSpan(context.active(), span);
    propagation.inject(active, request.header, {
      set: (headers, key, value) => headers.set(key, value),
    });
    try {
      const response = await context.with(active, () => next(request));
      span.setAttribute("rpc.grpc.status_code", 0);
      return response;
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (typeof code === "number") span.setAttribute("rpc.grpc.status_code", code);
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw error;
    } finally {
      span.end();
    }
  };
}

/**
 * A CLIENT span for one PostgreSQL statement, inside a traced request only (background work
 * makes none). Named by the statement's first keyword; the text itself, which can be long, is
 * not recorded.
 */
export async function traceQuery<T>(text: string, query: () => Promise<T>): Promise<T> {
  if (!provider || trace.getSpan(context.active()) === undefined) return query();
  const operation = /^\s*(\w+)/.exec(text)?.[1]?.toUpperCase() ?? "QUERY";
  const span = trace.getTracer("atrium-sql").startSpan(operation, {
    kind: SpanKind.CLIENT,
    attributes: { "db.system.name": "postgresql", "db.operation.name": operation },
  });
  try {
    return await context.with(trace.setSpan(context.active(), span), query);
  } catch (error) {
    span.setStatus({ code: SpanStatusCode.ERROR });
    throw error;
  } finally {
    span.end();
  }
}

/**
 * Runs `work` inside a span (INTERNAL unless `kind` says otherwise: a CLIENT span for a call to a
 * model) while tracing is on (a step of an agent, a tool), handing it the span to add what it
 * learns; off, `work` runs with no span at all. Attributes must name the work, never carry its
 * content.
 */
export async function inSpan<T>(
  tracerName: string,
  name: string,
  attributes: Attributes,
  work: (span: Span | undefined) => Promise<T>,
  kind: "internal" | "client" = "internal",
): Promise<T> {
  if (!provider) return work(undefined);
  const span = trace.getTracer(tracerName).startSpan(name, {
    kind: kind === "client" ? SpanKind.CLIENT : SpanKind.INTERNAL,
    attributes,
  });
  try {
    return await context.with(trace.setSpan(context.active(), span), () => work(span));
  } catch (error) {
    span.setStatus({ code: SpanStatusCode.ERROR });
    span.setAttribute("error.type", error instanceof Error ? error.name : "Error");
    throw error;
  } finally {
    span.end();
  }
}
