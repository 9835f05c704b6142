import {
  Code,
  ConnectError,
  createContextKey,
  type Interceptor,
  type StreamResponse,
} from "@connectrpc/connect";
import type { Logger } from "pino";
import type { AuthenticationError } from "../auth/authentication-error.js";
import { type Authenticator, identityKey } from "../auth/identity.js";
import { normalizeHandlerError } from "../errors.js";
import type { RequestLogLevel } from "../logger/log-levels.js";
import type { RequestMetrics } from "../observability/metrics.js";
import { type CallerAddressPolicy, callerAddressKey } from "./caller-address.js";
import { checkRequestInput } from "./input-rule.js";

/** Set per request by the adapter from the TLS socket; read by the auth interceptor. */
export const clientCertificateVerifiedKey = createContextKey(false, {
  description: "TLS layer verified the client certificate chain",
});

const operationOf = (req: { service: { typeName: string }; method: { name: string } }) =>
  `${req.service.typeName}/${req.method.name}`;

async function* mapStreamErrors<T>(
  messages: AsyncIterable<T>,
  map: (error: unknown) => unknown,
): AsyncIterable<T> {
  try {
    yield* messages;
  } catch (error) {
    throw map(error);
  }
}

async function* onStreamEnd<T>(
  messages: AsyncIterable<T>,
  done: (error: unknown) => void,
): AsyncIterable<T> {
  try {
    yield* messages;
    done(undefined);
  } catch (error) {
    done(error);
    throw error;
  }
}

/**
 * Outermost: one metric sample and one redacted log line per RPC, however it ended. Streams are
 * counted when their last message has been sent.
 */
export function observeCalls(
  logger: Logger,
  metrics: RequestMetrics,
  level: RequestLogLevel = "info",
): Interceptor {
  return (next) => async (req) => {
    const started = process.hrtime.bigint();
    const operation = operationOf(req);
    const record = (error: unknown) => {
      const durationSeconds = Number(process.hrtime.bigint() - started) / 1e9;
      const status = error === undefined ? "OK" : Code[ConnectError.from(error).code];
      metrics.observe({ transport: "grpc", operation, status, durationSeconds });
      // The line's headers are copied only when it will be written.
      if (!logger.isLevelEnabled(level)) return;
      logger[level](
        {
          req: { method: req.requestMethod, headers: Object.fromEntries(req.header) },
          operation,
          status,
          durationMs: Math.round(durationSeconds * 10_000) / 10,
        },
        "rpc completed",
      );
    };
    let res: Awaited<ReturnType<typeof next>>;
    try {
      res = await next(req);
    } catch (error) {
      record(error);
      throw error;
    }
    if (!res.stream) {
      record(undefined);
      return res;
    }
    return { ...res, message: onStreamEnd(res.message, record) } as StreamResponse;
  };
}

/**
 * Everything that leaves a handler goes through toAtriumError; anything that is not ours is
 * logged with its cause and reaches the client as a bare Internal, never its message. The result
 * is re-issued as a plain ConnectError because Connect recognizes errors by `name`, and a
 * subclass that names itself (AuthenticationError, …) would otherwise be sent as Unknown.
 */
export function normalizeErrors(logger: Logger): Interceptor {
  const normalize = (error: unknown) => {
    const normalized = normalizeHandlerError(error, logger, "rpc failed");
    return new ConnectError(
      normalized.rawMessage,
      normalized.code,
      normalized.metadata,
      normalized.details as ConstructorParameters<typeof ConnectError>[3],
    );
  };
  return (next) => async (req) => {
    try {
      const res = await next(req);
      if (!res.stream) return res;
      return { ...res, message: mapStreamErrors(res.message, normalize) } as StreamResponse;
    } catch (error) {
      throw normalize(error);
    }
  };
}

/**
 * The address allowlist, before authentication as on REST; the adapter resolved the address.
 * Services in `exempt` (the health probe, like REST's /health) are open to any address.
 */
export function restrictCallers(
  logger: Logger,
  policy: CallerAddressPolicy,
  exempt: ReadonlySet<string> = new Set(),
): Interceptor {
  return (next) => async (req) => {
    if (exempt.has(req.service.typeName)) return next(req);
    const callerAddress = req.contextValues.get(callerAddressKey);
    try {
      policy.check(callerAddress);
    } catch (error) {
      logger.warn({ callerAddress, operation: operationOf(req) }, "caller address rejected");
      throw error;
    }
    return next(req);
  };
}

/**
 * The same authenticator as REST, on request metadata; the identity goes into contextValues.
 * Services in `exempt` (health and reflection, see grpc-server.ts) take no credentials.
 */
export function authenticateCalls(
  logger: Logger,
  authenticator: Authenticator,
  exempt: ReadonlySet<string> = new Set(),
): Interceptor {
  return (next) => async (req) => {
    if (exempt.has(req.service.typeName)) return next(req);
    let identity: Awaited<ReturnType<Authenticator["authenticate"]>>;
    try {
      identity = await authenticator.authenticate({
        headers: req.header,
        clientCertificateVerified: req.contextValues.get(clientCertificateVerifiedKey),
        procedure: `/${operationOf(req)}`,
      });
    } catch (error) {
      logger.warn(
        {
          mechanism: (error as Partial<AuthenticationError>).mechanism ?? "unknown",
          operation: operationOf(req),
        },
        "authentication rejected",
      );
      throw error;
    }
    req.contextValues.set(identityKey, identity);
    return next(req);
  };
}

/** The input rule REST applies (see input-rule.ts), on the decoded request message. */
export function refuseUnsafeInput(nestingDepth: number): Interceptor {
  return (next) => async (req) => {
    if (!req.stream) checkRequestInput(req.message, "", nestingDepth);
    return next(req);
  };
}
