import * as http2 from "node:http2";
import type { Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import { grpcHealthV1 } from "@atrium/api";
import {
  Code,
  ConnectError,
  createContextValues,
  createServiceImplSpec,
} from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import type { Logger } from "pino";
import type { TlsOptions } from "../auth/auth-config.js";
import type { Authenticator } from "../auth/identity.js";
import type { RequestLogLevel } from "../logger/log-levels.js";
import type { HealthReport } from "../observability/health.js";
import type { RequestMetrics } from "../observability/metrics.js";
import { traceGrpcServer, tracingEnabled } from "../observability/tracing.js";
import {
  type CallerAddressPolicy,
  callerAddressKey,
  forwardedCallerKey,
} from "./caller-address.js";
import { createRefusalLog, exemptLoopback, limitConnectionsPerClient } from "./connection-limit.js";
import { createGrpcHealth } from "./grpc-health.js";
import {
  authenticateCalls,
  clientCertificateVerifiedKey,
  normalizeErrors,
  observeCalls,
  refuseUnsafeInput,
  restrictCallers,
} from "./grpc-interceptors.js";
import { createGrpcReflection } from "./grpc-reflection.js";
import { createGrpcUnaryHandler, type GrpcStreamHandler } from "./grpc-unary-handler.js";
import { jsonInputOptions } from "./json-input.js";
import { withCallerParseErrors } from "./parse-errors.js";
import type { ServiceRegistration } from "./service-registration.js";
import { refuseStream } from "./stream-refusal.js";
import {
  defaultTransportLimits,
  headerListBytes,
  headersTooLargeMessage,
  type TransportLimits,
} from "./transport-limits.js";

export interface GrpcServerOptions {
  logger: Logger;
  metrics: RequestMetrics;
  services: ServiceRegistration[];
  callerAddress: CallerAddressPolicy;
  authenticator?: Authenticator;
  tls?: TlsOptions;
  /** The host's limits (transport-limits.ts); the defaults when absent. */
  limits?: TransportLimits;
  requestLogLevel?: RequestLogLevel;
  /** The report REST's `/health` gives; grpc.health.v1 answers from it (always SERVING when absent). */
  healthReport?: () => Promise<HealthReport>;
  /** How often an open health Watch re-reads the report (default 5 s). */
  healthWatchIntervalMs?: number;
  /** Names the tracer of the server spans while tracing is on (observability/tracing.ts). */
  tracerName?: string;
}

export interface GrpcServer {
  listen(host: string, port: number): Promise<number>;
  /** Lets open calls finish, then closes; connections still open after `graceMs` are cut. */
  close(graceMs: number): Promise<void>;
}

/**
 * HTTP/2 server speaking gRPC, gRPC-Web and Connect. Unary calls in plain binary gRPC, nearly all
 * the traffic, take the direct path of grpc-unary-handler.ts; the rest goes through Connect's
 * router. Both run the same implementations behind the same interceptors.
 */
export function createGrpcServer(options: GrpcServerOptions): GrpcServer {
  const { logger, metrics, callerAddress, authenticator, tls } = options;
  const limits = options.limits ?? defaultTransportLimits;
  const { services, health, openServices, probeServices } = withStandardServices(options);
  const interceptors = [
    observeCalls(logger, metrics, options.requestLogLevel),
    normalizeErrors(logger),
    restrictCallers(logger, callerAddress, probeServices),
    ...(authenticator ? [authenticateCalls(logger, authenticator, openServices)] : []),
    refuseUnsafeInput(limits.nestingDepth),
  ];
  const contextValues = (socket: Socket | undefined, forwardedFor: string | string[] | undefined) =>
    createContextValues()
      .set(clientCertificateVerifiedKey, (socket as TLSSocket | undefined)?.authorized === true)
      .set(callerAddressKey, callerAddress.resolve(socket?.remoteAddress, forwardedFor))
      .set(forwardedCallerKey, (forwarded) => {
        // The header that call would have carried: its own hops, then what proxies added here.
        const hops = [forwarded, ...[forwardedFor ?? []].flat()].filter(Boolean).join(",");
        const address = callerAddress.resolve(socket?.remoteAddress, hops || undefined);
        callerAddress.check(address);
        return address;
      });
  const connectHandler = connectNodeAdapter({
    routes: (router) => {
      for (const { service, implementation } of services) {
        // Per method, so that Connect JSON is checked against the method's input (json-input.ts).
        for (const spec of Object.values(createServiceImplSpec(service, implementation).methods)) {
          router.rpc(spec.method, spec.impl as never, {
            jsonOptions: jsonInputOptions(spec.method.input, limits),
          });
        }
      }
      // Bytes that are no request message are the caller's error here too (parse-errors.ts).
      router.handlers.splice(0, Infinity, ...router.handlers.map(withCallerParseErrors));
    },
    interceptors,
    contextValues: (req) => contextValues(req.socket, req.headers["x-forwarded-for"]),
    readMaxBytes: limits.messageBytes,
  });
  const grpcUnary = createGrpcUnaryHandler({
    logger,
    services,
    interceptors,
    contextValues: (stream, headers) =>
      contextValues(stream.session?.socket, headers["x-forwarded-for"]),
    readMaxBytes: limits.messageBytes,
  });
  // Node caps a header list at 128 fields by default and resets the stream above that, where
  // REST accepts any number within the byte limit. Every field costs at least 33 bytes as HTTP/2
  // counts them, so with this cap the byte limit (checked in routeStreams) is the one that
  // refuses, on every transport alike.
  const headerFields = { maxHeaderListPairs: Math.ceil(limits.headerBytes / 32) + 8 };
  const server = tls
    ? http2.createSecureServer({
        ...headerFields,
        cert: tls.cert,
        key: tls.key,
        ca: tls.ca,
        requestCert: tls.requireClientCert || tls.ca !== undefined,
        rejectUnauthorized: tls.requireClientCert,
        allowHTTP1: true,
      })
    : http2.createServer(headerFields);
  limitConnectionsPerClient(server, {
    perClient: limits.connectionsPerClient,
    exempt: exemptLoopback,
    onRefused: createRefusalLog({ logger, perClient: limits.connectionsPerClient }),
  });
  server.on("request", (request, response) => {
    drainUnreadBody(request, response);
    connectHandler(request, response);
  });
  routeStreams(server, grpcUnary, limits);
  if (tracingEnabled()) traceGrpcServer(server, options.tracerName ?? "atrium");

  const sessions = new Set<http2.Http2Session>();
  const sockets = new Set<Socket>();
  server.on("session", (session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
  });
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });

  return {
    listen(host, port) {
      return new Promise((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, host, () => {
          server.off("error", reject);
          const address = server.address();
          resolve(typeof address === "object" && address ? address.port : port);
        });
      });
    },
    close(graceMs) {
      // Watchers hear NOT_SERVING and their streams end, so they do not hold the drain open.
      health.drain();
      if (!server.listening) return Promise.resolve();
      return new Promise((resolve) => {
        const cut = setTimeout(() => {
          for (const socket of sockets) socket.destroy();
        }, graceMs);
        cut.unref();
        server.close(() => {
          clearTimeout(cut);
          resolve();
        });
        for (const session of sessions) session.close();
      });
    },
  };
}

/**
 * The services' own registrations plus grpc.health.v1.Health and server reflection (v1 and
 * v1alpha), which every port serves so that standard tools (Kubernetes gRPC probes, buf curl,
 * grpcurl, Postman) need no .proto files and no credentials:
 * - health answers like REST's `/health`, which never asks for credentials nor checks the caller
 *   address: a kubelet's probe carries none and comes from the node, not an allowed range;
 * - reflection tells what the committed .proto files and OpenAPI documents already publish, and
 *   nothing about any data, so it needs no credentials; the caller address rule still applies.
 */
function withStandardServices(options: GrpcServerOptions) {
  const health = createGrpcHealth({
    report: options.healthReport ?? alwaysHealthy,
    serviceNames: options.services.map(({ service }) => service.typeName),
    watchIntervalMs: options.healthWatchIntervalMs,
  });
  const reflection = createGrpcReflection([
    ...options.services.map(({ service }) => service),
    grpcHealthV1.Health,
  ]);
  const [v1, v1alpha] = reflection.services;
  // Registrations take services of any descriptor; each implementation is typed by its own.
  const standard = [
    { service: grpcHealthV1.Health, implementation: health.implementation },
    { service: v1, implementation: reflection.v1 },
    { service: v1alpha, implementation: reflection.v1alpha },
  ] as unknown as ServiceRegistration[];
  return {
    services: [...options.services, ...standard],
    health,
    openServices: new Set(standard.map(({ service }) => service.typeName)),
    probeServices: new Set([grpcHealthV1.Health.typeName]),
  };
}

const alwaysHealthy = async (): Promise<HealthReport> => ({
  status: "healthy",
  service: "",
  timestamp: new Date().toISOString(),
  checks: {},
});

/**
 * Node's compatibility API (the "request" event Connect's adapter listens to) is itself a
 * "stream" listener that wraps every stream in request/response objects. It is taken out and
 * called only for the streams `direct` leaves, so that a stream served directly has no second
 * reader or writer. HTTP/1.1 requests (TLS with allowHTTP1) reach "request" without it.
 */
function routeStreams(
  server: http2.Http2Server | http2.Http2SecureServer,
  direct: GrpcStreamHandler,
  limits: TransportLimits,
) {
  const [compatibility, ...others] = server.listeners("stream");
  if (compatibility === undefined || others.length > 0) {
    throw new Error("expected exactly Node's HTTP/2 compatibility listener on 'stream'");
  }
  server.removeListener("stream", compatibility as (...args: unknown[]) => void);
  server.on(
    "stream",
    (
      stream: http2.ServerHttp2Stream,
      headers: http2.IncomingHttpHeaders,
      flags: number,
      rawHeaders: string[],
    ) => {
      if (headerListBytes(headers) > limits.headerBytes) {
        const refusal = new ConnectError(headersTooLargeMessage(limits), Code.ResourceExhausted);
        refuseStream(stream, headers, refusal, 431);
        return;
      }
      cutSlowBody(stream, headers, limits.bodyReadTimeoutMs);
      if (!direct(stream, headers)) compatibility.call(server, stream, headers, flags, rawHeaders);
    },
  );
}

/**
 * Connect answers a message over the size limit as soon as it has read that much, and reads no
 * more: the rest of the body then fills the stream's flow-control window and, with it, the
 * session's, so every later call on the connection stalled. Once the answer is complete, what is
 * still coming is read and dropped, as Node's HTTP/1 server does with an unread body; a client
 * that keeps sending is cut by the body read timeout.
 */
function drainUnreadBody(request: http2.Http2ServerRequest, response: http2.Http2ServerResponse) {
  const end = response.end;
  response.end = function (this: http2.Http2ServerResponse, ...args: unknown[]) {
    if (!request.complete) {
      // Connect has let go of the request (its reader may have destroyed it, and Node's
      // compatibility layer pauses the stream whenever a destroyed request refuses data), so the
      // stream is read directly.
      request.stream.removeAllListeners("data");
      request.stream.resume();
    }
    return (end as (...a: unknown[]) => http2.Http2ServerResponse).apply(this, args);
  } as typeof end;
}

/**
 * A request must be sent whole (headers and body) within `timeoutMs`, as Node's `requestTimeout`
 * holds REST to; otherwise a client trickling a body holds a stream and its buffers for as long
 * as it likes. No RPC here streams its request, so every body has an end.
 */
function cutSlowBody(
  stream: http2.ServerHttp2Stream,
  headers: http2.IncomingHttpHeaders,
  timeoutMs: number,
) {
  const timer = setTimeout(() => {
    // remoteClose: the client sent its last frame, whether or not anyone has read it yet.
    if (stream.closed || stream.destroyed || stream.state.remoteClose) return;
    const message = `request not received within ${timeoutMs} ms`;
    refuseStream(stream, headers, new ConnectError(message, Code.DeadlineExceeded), 408);
  }, timeoutMs);
  timer.unref();
  stream.once("close", () => clearTimeout(timer));
}
