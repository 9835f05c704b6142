import { Code, ConnectError } from "@connectrpc/connect";
import type { Logger } from "./logger/logger.js";

export { Code };

/** HTTP status for each gRPC code; the one table both transports agree on. */
const httpStatusByCode: Record<Code, number> = {
  [Code.Canceled]: 499,
  [Code.Unknown]: 500,
  [Code.InvalidArgument]: 400,
  [Code.DeadlineExceeded]: 504,
  [Code.NotFound]: 404,
  [Code.AlreadyExists]: 409,
  [Code.PermissionDenied]: 403,
  [Code.ResourceExhausted]: 429,
  [Code.FailedPrecondition]: 412,
  [Code.Aborted]: 409,
  [Code.OutOfRange]: 400,
  [Code.Unimplemented]: 501,
  [Code.Internal]: 500,
  [Code.Unavailable]: 503,
  [Code.DataLoss]: 500,
  [Code.Unauthenticated]: 401,
};

export function httpStatusForCode(code: Code): number {
  return httpStatusByCode[code] ?? 500;
}

/**
 * The table read backwards, for a REST answer that names no code: Internal for 500, else the
 * first code with this status (400 is InvalidArgument, 409 AlreadyExists), Unknown for a status
 * the table lacks.
 */
export function codeForHttpStatus(status: number): Code {
  const codes = [Code.Internal, ...(Object.keys(httpStatusByCode).map(Number) as Code[])];
  return codes.find((code) => httpStatusByCode[code] === status) ?? Code.Unknown;
}

export interface AtriumErrorOptions {
  /** Overrides the HTTP status from the table (for a fixed error's, see fixed-errors.ts). */
  httpStatus?: number;
  /** Overrides the REST body; used only where a spec gives an exact body. */
  httpBody?: Record<string, unknown>;
  cause?: unknown;
  /** When a retry may succeed: REST `Retry-After`, gRPC `retry-after` metadata. */
  retryAfterSeconds?: number;
  /** Structured details for gRPC callers (fixed-error.ts sends google.rpc.ErrorInfo). */
  details?: ConnectError["details"];
}

/**
 * The one error type of Atrium. It is a ConnectError, so the gRPC transport sends its code as is;
 * the REST transport maps the code through `httpStatusForCode`.
 */
export class AtriumError extends ConnectError {
  // ConnectError's static hasInstance accepts any ConnectError-shaped value; ours must not.
  static override [Symbol.hasInstance](value: unknown): boolean {
    // biome-ignore lint/complexity/noThisInStatic: `this` is the subclass being tested against.
    return Function.prototype[Symbol.hasInstance].call(this, value);
  }

  readonly httpStatus: number;
  readonly httpBody: Record<string, unknown> | undefined;

  constructor(code: Code, message: string, options: AtriumErrorOptions = {}) {
    const metadata =
      options.retryAfterSeconds === undefined
        ? undefined
        : { "retry-after": String(options.retryAfterSeconds) };
    super(message, code, metadata, undefined, options.cause);
    if (options.details) this.details = options.details;
    // ConnectError pins its own prototype; restore ours so `instanceof AtriumError` holds.
    // Connect recognizes its errors by `name === "ConnectError"`, so the name stays as is.
    Object.setPrototypeOf(this, new.target.prototype);
    this.httpStatus = options.httpStatus ?? httpStatusForCode(code);
    this.httpBody = options.httpBody;
  }

  /** The message without Connect's "[code]" prefix. */
  get plainMessage(): string {
    return this.rawMessage;
  }
}

export const invalidArgument = (message: string) => new AtriumError(Code.InvalidArgument, message);
export const notFound = (message: string) => new AtriumError(Code.NotFound, message);
export const failedPrecondition = (message: string) =>
  new AtriumError(Code.FailedPrecondition, message);
export const unauthenticated = (message: string) => new AtriumError(Code.Unauthenticated, message);
export const unimplemented = (message: string) => new AtriumError(Code.Unimplemented, message);
export const internal = (message: string, cause?: unknown) =>
  new AtriumError(Code.Internal, message, { cause });

/**
 * Normalizes anything thrown into an AtriumError at a transport boundary. Errors that are not
 * ours become Internal with a generic message, so stack traces and driver messages never reach
 * a client; the original is kept as `cause` for the log.
 */
export function toAtriumError(error: unknown): AtriumError {
  if (error instanceof AtriumError) return error;
  if (error instanceof ConnectError) {
    return new AtriumError(error.code, error.rawMessage, { cause: error, details: error.details });
  }
  return new AtriumError(Code.Internal, "internal error", { cause: error });
}

/**
 * An error leaving a handler, as its caller will see it (toAtriumError). One that is not ours
 * (Internal, Unknown) reaches the caller bare, so it is logged here, once, with its cause under
 * the site's message `what`.
 */
export function normalizeHandlerError(error: unknown, logger: Logger, what: string): AtriumError {
  const normalized = toAtriumError(error);
  if (normalized.code === Code.Internal || normalized.code === Code.Unknown) {
    logger.error({ err: normalized.cause ?? error }, what);
  }
  return normalized;
}

export interface RestErrorBody {
  code: string;
  message: string;
  [key: string]: unknown;
}

/**
 * REST status, body and headers for an error: `{"code": "<GrpcCodeName>", "message": "…"}`, with
 * `Retry-After` when the error says a retry may succeed.
 */
export function restError(error: unknown): {
  status: number;
  body: RestErrorBody | Record<string, unknown>;
  headers: Record<string, string>;
} {
  const e = toAtriumError(error);
  const retryAfter = e.metadata.get("retry-after");
  const headers: Record<string, string> = retryAfter ? { "retry-after": retryAfter } : {};
  if (e.httpBody) return { status: e.httpStatus, body: e.httpBody, headers };
  return { status: e.httpStatus, body: { code: Code[e.code], message: e.plainMessage }, headers };
}
