import type { DescService } from "@bufbuild/protobuf";
import { createContextValues, type ServiceImpl } from "@connectrpc/connect";
import type { FastifyInstance } from "fastify";
import type { Logger } from "pino";
import type { Registry } from "prom-client";
import type { TlsOptions } from "../auth/auth-config.js";
import { type Authenticator, identityKey } from "../auth/identity.js";
import type { RequestLogLevel } from "../logger/log-levels.js";
import { createHealthReporter, type HealthCheck } from "../observability/health.js";
import { createRequestMetrics } from "../observability/metrics.js";
import { restRequestSpan, traceHttpServer, tracingEnabled } from "../observability/tracing.js";
import { registerRestRoutes } from "../rpc/transcoder.js";
import { callerAddressKey, createCallerAddressPolicy } from "./caller-address.js";
import type { Cidr } from "./cidr.js";
import { createGrpcServer } from "./grpc-server.js";
import { createRestApp, requestCallerAddress, requestIdentity } from "./rest-app.js";
import { defaultShutdownGraceMs, drainDeadlineMs } from "./shutdown-grace.js";
import { type TransportLimits, transportLimits } from "./transport-limits.js";

export interface ServiceHostOptions {
  name: string;
  logger: Logger;
  /** Port 0 asks for an ephemeral port; `start()` reports the one taken. */
  rest: { host?: string; port: number };
  grpc?: { host?: string; port: number };
  services?: { service: DescService; implementation: Partial<ServiceImpl<DescService>> }[];
  authenticator?: Authenticator;
  /**
   * Callers whose address (see `trustedProxies`) is outside these ranges get the fixed error
   * ipNotAllowed (REST 403, gRPC PERMISSION_DENIED) before authentication; /health and /metrics
   * stay open. Empty or absent: no restriction.
   */
  allowedCidrs?: Cidr[];
  /**
   * Reverse proxies whose X-Forwarded-For names the caller (right-most hop that is not itself a
   * trusted proxy). From any other peer the header is ignored.
   */
  trustedProxies?: Cidr[];
  tls?: TlsOptions;
  healthChecks?: Record<string, HealthCheck>;
  configureRest?: (app: FastifyInstance) => void | Promise<void>;
  /**
   * Overrides of the limits every transport applies alike (transport-limits.ts: 1 MiB messages,
   * 64 levels of nesting, 16 KiB of headers, 30 s to send a request).
   */
  limits?: Partial<TransportLimits>;
  /** `SHUTDOWN_GRACE_MS` (see shutdownGraceMs): `stop()` ends within it whatever clients do. */
  shutdownGraceMs?: number;
  /** `REQUEST_LOG_LEVEL` (see requestLogLevel): the level of each request's line; info by default. */
  requestLogLevel?: RequestLogLevel;
}

export interface ServiceHost {
  readonly rest: FastifyInstance;
  readonly metrics: Registry;
  start(): Promise<{ restUrl: string; grpcUrl?: string }>;
  /**
   * Drains: stops accepting, lets requests in flight finish, answers them `Connection: close`,
   * closes idle keep-alive connections and ends SSE streams (preClose hooks); whatever is still
   * open at the drain deadline is cut.
   */
  stop(): Promise<void>;
}

const defaultHost = "0.0.0.0";

/** A URL a local client can dial: wildcard binds are reached through loopback. */
function urlFor(scheme: string, host: string, port: number): string {
  const dialable = host === "0.0.0.0" ? "127.0.0.1" : host === "::" ? "::1" : host;
  return `${scheme}://${dialable.includes(":") ? `[${dialable}]` : dialable}:${port}`;
}

/**
 * One service process: REST (Fastify) and, when asked, gRPC/gRPC-Web/Connect on HTTP/2, both
 * behind the same caller address policy, authenticator, metrics registry and redacting logger.
 */
export function createServiceHost(options: ServiceHostOptions): ServiceHost {
  const { name, logger, authenticator, tls } = options;
  const limits = transportLimits(options.limits);
  const services = options.services ?? [];
  const requestMetrics = createRequestMetrics({ service: name });
  const health = createHealthReporter({ service: name, checks: options.healthChecks, logger });
  const callerAddress = createCallerAddressPolicy({
    allowedCidrs: options.allowedCidrs,
    trustedProxies: options.trustedProxies,
  });
  const rest = createRestApp({
    logger,
    metrics: requestMetrics,
    health,
    callerAddress,
    authenticator,
    tls,
    limits,
    requestLogLevel: options.requestLogLevel,
  });
  if (tracingEnabled()) {
    traceHttpServer(rest.server, `atrium-${name}`);
    // The span is named by the route pattern, known once routing has run (`POST
    // /api/v1/sessions`). A callback hook, not an async one: no promise per request.
    rest.addHook("onRequest", (request, _reply, done) => {
      const route = request.routeOptions.url;
      const span = restRequestSpan();
      if (span && route) {
        span.updateName(`${request.method} ${route}`);
        span.setAttribute("http.route", route);
      }
      done();
    });
  }
  const grpc = options.grpc
    ? createGrpcServer({
        logger,
        metrics: requestMetrics,
        services,
        callerAddress,
        authenticator,
        tls,
        limits,
        requestLogLevel: options.requestLogLevel,
        healthReport: health,
        tracerName: `atrium-${name}`,
      })
    : undefined;
  const scheme = tls ? "https" : "http";
  const deadlineMs = drainDeadlineMs(options.shutdownGraceMs ?? defaultShutdownGraceMs);
  let draining = false;
  // A keep-alive client that sends one more request while the server drains gets its answer
  // and the connection closed after it, so no socket outlives the drain.
  // A callback hook: an async one cost every response two promises.
  rest.addHook("onSend", (_request, reply, payload, done) => {
    if (draining) reply.header("connection", "close");
    done(null, payload);
  });

  return {
    rest,
    metrics: requestMetrics.registry,
    async start() {
      for (const { service, implementation } of services) {
        registerRestRoutes(rest, service, implementation, {
          contextValues: (request) =>
            createContextValues()
              .set(identityKey, requestIdentity(request))
              .set(callerAddressKey, requestCallerAddress(request)),
        });
      }
      await options.configureRest?.(rest);
      const restHost = options.rest.host ?? defaultHost;
      await rest.listen({ host: restHost, port: options.rest.port });
      const restPort = (rest.server.address() as { port: number }).port;
      const urls: { restUrl: string; grpcUrl?: string } = {
        restUrl: urlFor(scheme, restHost, restPort),
      };
      if (grpc && options.grpc) {
        const grpcHost = options.grpc.host ?? defaultHost;
        try {
          const grpcPort = await grpc.listen(grpcHost, options.grpc.port);
          urls.grpcUrl = urlFor(scheme, grpcHost, grpcPort);
        } catch (error) {
          await rest.close();
          throw error;
        }
      }
      logger.info({ service: name, ...urls, auth: authenticator !== undefined }, "service started");
      return urls;
    },
    async stop() {
      draining = true;
      const cut = setTimeout(() => rest.server.closeAllConnections(), deadlineMs);
      cut.unref();
      try {
        await Promise.all([rest.close(), grpc?.close(deadlineMs)]);
      } finally {
        clearTimeout(cut);
      }
      logger.info({ service: name }, "service stopped");
    },
  };
}
