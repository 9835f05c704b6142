import type { TLSSocket } from "node:tls";
import Fastify, {
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from "fastify";
import type { Logger } from "pino";
import type { TlsOptions } from "../auth/auth-config.js";
import type { AuthenticationError } from "../auth/authentication-error.js";
import type { Authenticator, Identity, Principal } from "../auth/identity.js";
import { AtriumError, Code, notFound, restError } from "../errors.js";
import type { RequestLogLevel } from "../logger/log-levels.js";
import type { HealthReport } from "../observability/health.js";
import type { RequestMetrics } from "../observability/metrics.js";
import type { CallerAddressPolicy } from "./caller-address.js";
import { createRefusalLog, exemptLoopback, limitConnectionsPerClient } from "./connection-limit.js";
import { toFetchHeaders } from "./fetch-headers.js";
import { checkRestInput } from "./input-rule.js";
import { normalizeRestError } from "./rest-errors.js";
import {
  defaultTransportLimits,
  headerListBytes,
  headersTooLargeMessage,
  type TransportLimits,
} from "./transport-limits.js";

export interface RestAppOptions {
  logger: Logger;
  metrics: RequestMetrics;
  health: () => Promise<HealthReport>;
  callerAddress: CallerAddressPolicy;
  authenticator?: Authenticator;
  tls?: TlsOptions;
  /** The host's limits (transport-limits.ts); the defaults when absent. */
  limits?: TransportLimits;
  /** The level of each request's line (health checks and scrapes are always debug). */
  requestLogLevel?: RequestLogLevel;
}

/** Routes every probe and scraper must reach without credentials (spec: always skip auth). */
const openRoutes = new Set(["/health", "/metrics"]);

const identities = new WeakMap<FastifyRequest, Identity>();
const principals = new WeakMap<FastifyRequest, Principal>();
const callerAddresses = new WeakMap<FastifyRequest, string>();

/** The JWT identity of a REST request, for routes added through `configureRest`. */
export function requestIdentity(request: FastifyRequest): Identity | undefined {
  return identities.get(request);
}

/**
 * Who the host's authentication admitted a REST request as: the JWT's user, else the mechanism
 * that admitted it; `anonymous` on a host without authentication (or one that does not say what
 * it checked), whatever headers the request carries.
 */
export function requestPrincipal(request: FastifyRequest): Principal {
  return principals.get(request) ?? { kind: "anonymous" };
}

/** What an authenticator that admitted a request without a JWT identity has proved. */
function principalOf(authenticator: Authenticator, identity: Identity | undefined): Principal {
  if (identity) return { kind: "user", identity };
  if (authenticator.mechanisms?.includes("api_key")) return { kind: "api_key" };
  if (authenticator.mechanisms?.includes("mtls")) return { kind: "client_certificate" };
  return { kind: "anonymous" };
}

/** The caller's resolved address (as `callerAddressKey`), for routes added by `configureRest`. */
export function requestCallerAddress(request: FastifyRequest): string {
  return callerAddresses.get(request) ?? "";
}

function pathOf(url: string): string {
  const query = url.indexOf("?");
  return query === -1 ? url : url.slice(0, query);
}

/** Route pattern, not the concrete URL, so metric labels stay few. */
export function restOperation(request: FastifyRequest): string {
  const route = request.routeOptions.url;
  return route ? `${request.method} ${route}` : "unmatched";
}

/**
 * Fastify with the host's cross-cutting behaviour: address allowlist, then auth, before routing,
 * one redacted log line and one metric sample per request, JSON errors without internals,
 * /health and /metrics.
 */
export function createRestApp(options: RestAppOptions): FastifyInstance {
  const { logger, metrics, callerAddress, authenticator, tls } = options;
  const limits = options.limits ?? defaultTransportLimits;
  // Node's HTTP/1 server enforces these: 431 above the header size, 408 and the connection
  // closed when a request is not complete in time (checked at this interval, not per byte).
  const http = {
    maxHeaderSize: limits.headerBytes,
    requestTimeout: limits.bodyReadTimeoutMs,
    headersTimeout: limits.bodyReadTimeoutMs,
    connectionsCheckingInterval: Math.min(1000, limits.bodyReadTimeoutMs),
  };
  const app = Fastify({
    loggerInstance: logger,
    // One line per request is written by the onResponse hook below, with the operation label.
    logController: new LogController({ disableRequestLogging: true }),
    // A pino child per request (redacting its bindings) cost ~3% of a small request's CPU; the
    // lines below carry the request id themselves.
    childLoggerFactory: (parent) => parent,
    bodyLimit: limits.messageBytes,
    requestTimeout: limits.bodyReadTimeoutMs,
    // A `__proto__` or `constructor` key is parsed as an ordinary key and then refused by the
    // input rule, which names where it is (Fastify's own refusal said "not valid JSON").
    onProtoPoisoning: "ignore",
    onConstructorPoisoning: "ignore",
    ...(tls
      ? {
          https: {
            ...http,
            cert: tls.cert,
            key: tls.key,
            ca: tls.ca,
            // With a CA, a client may present a certificate; with requireClientCert the handshake
            // refuses any client whose chain does not verify, before HTTP is parsed.
            requestCert: tls.requireClientCert || tls.ca !== undefined,
            rejectUnauthorized: tls.requireClientCert,
          },
        }
      : { http }),
  }) as unknown as FastifyInstance;
  limitConnectionsPerClient(app.server, {
    perClient: limits.connectionsPerClient,
    exempt: exemptLoopback,
    onRefused: createRefusalLog({ logger, perClient: limits.connectionsPerClient }),
  });

  const isOpen = (request: FastifyRequest) =>
    request.routeOptions.url !== undefined && openRoutes.has(request.routeOptions.url);

  // The header limit counted as the gRPC port counts it (the request line as :method and
  // :path): Node's HTTP/1 parser counts raw bytes, which let a header section through on REST
  // that the gRPC port refused (a JWT with 12 KB of claims and a few other headers). Node's own
  // cap above stays as the parser's backstop. First, so it holds on every route.
  // The hooks that do not wait for anything are callback hooks: an async one costs every request
  // two promises and a turn of the microtask queue (and more under OpenTelemetry's
  // AsyncLocalStorage, which tracks every promise). A hook's throw refuses the request as a
  // rejection would; `done` is called last, outside any try.
  app.addHook("onRequest", (request, _reply, done) => {
    const headers = { ":method": request.method, ":path": request.url, ...request.headers };
    if (headerListBytes(headers) > limits.headerBytes) {
      throw new AtriumError(Code.ResourceExhausted, headersTooLargeMessage(limits), {
        httpStatus: 431,
      });
    }
    done();
  });

  // Before authentication, so a refused address never reaches the authenticator.
  app.addHook("onRequest", (request, _reply, done) => {
    const address = callerAddress.resolve(
      request.socket.remoteAddress,
      request.headers["x-forwarded-for"],
    );
    callerAddresses.set(request, address);
    if (!isOpen(request)) {
      try {
        callerAddress.check(address);
      } catch (error) {
        logger.warn(
          { reqId: request.id, callerAddress: address, operation: restOperation(request) },
          "caller address rejected",
        );
        throw error;
      }
    }
    done();
  });

  if (authenticator) {
    app.addHook("onRequest", async (request) => {
      if (isOpen(request)) return;
      try {
        const identity = await authenticator.authenticate({
          headers: toFetchHeaders(request.headers),
          clientCertificateVerified: (request.raw.socket as TLSSocket).authorized === true,
          procedure: (request.routeOptions.config as { procedure?: string } | undefined)?.procedure,
          method: request.method,
          path: pathOf(request.url),
        });
        if (identity) identities.set(request, identity);
        principals.set(request, principalOf(authenticator, identity));
      } catch (error) {
        logger.warn(
          {
            reqId: request.id,
            mechanism: (error as Partial<AuthenticationError>).mechanism ?? "unknown",
            operation: restOperation(request),
          },
          "authentication rejected",
        );
        throw error;
      }
    });
  }

  // After authentication and body parsing, before any handler (and so any query) runs.
  app.addHook("preValidation", (request, _reply, done) => {
    checkRestInput(
      request,
      (request.routeOptions.config as { paramNames?: Record<string, string> }).paramNames,
      limits,
    );
    done();
  });

  app.addHook("onResponse", (request, reply, done) => {
    writeResponseLine(request, reply);
    done();
  });

  /** The request's metrics and its log line, once the response is sent. */
  function writeResponseLine(request: FastifyRequest, reply: FastifyReply): void {
    const operation = restOperation(request);
    metrics.observe({
      transport: "rest",
      operation,
      status: String(reply.statusCode),
      durationSeconds: reply.elapsedTime / 1000,
    });
    const level = isOpen(request) ? "debug" : (options.requestLogLevel ?? "info");
    // The line's object is built only when it will be written (a busy service logs at warn).
    if (!logger.isLevelEnabled(level)) return;
    logger[level](
      {
        reqId: request.id,
        req: {
          method: request.method,
          path: pathOf(request.url),
          headers: request.headers,
          remoteAddress: request.ip,
        },
        res: { statusCode: reply.statusCode },
        operation,
        durationMs: Math.round(reply.elapsedTime * 10) / 10,
      },
      "request completed",
    );
  }

  app.setErrorHandler((error, request, reply) => {
    const normalized = normalizeRestError(error);
    if (normalized.httpStatus >= 500) {
      logger.error({ reqId: request.id, err: normalized.cause ?? error }, "request failed");
    }
    const { status, body, headers } = restError(normalized);
    return reply.status(status).headers(headers).send(body);
  });

  app.setNotFoundHandler((request, reply) => {
    const { status, body } = restError(
      notFound(`no route for ${request.method} ${pathOf(request.url)}`),
    );
    return reply.status(status).send(body);
  });

  app.get("/health", () => options.health());
  app.get("/metrics", async (_request, reply) => {
    reply.header("content-type", metrics.registry.contentType);
    return metrics.registry.metrics();
  });

  return app;
}
