import { AtriumError, Code } from "../errors.js";

/** Seconds a client is told to wait before retrying a call the database could not serve. */
export const databaseRetryAfterSeconds = 1;

const socketCodes = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

/**
 * SQLSTATEs of a server that is going away or not taking connections: class 08 (connection
 * exception), admin/crash shutdown, cannot connect now, too many connections.
 */
const serverCodes = new Set(["57P01", "57P02", "57P03", "53300"]);

/**
 * Whether an error's code means the database is unreachable rather than the query being wrong: a
 * socket failure, or a SQLSTATE of a server going away. (A connection `pg` loses or never makes
 * comes with no code; the adapter knows it from the connection, see `asDatabaseUnavailable`.)
 */
export function isConnectionError(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const { code } = error as { code?: unknown };
  if (typeof code === "string") {
    if (socketCodes.has(code) || serverCodes.has(code) || code.startsWith("08")) return true;
  }
  if (error instanceof AggregateError) return error.errors.some(isConnectionError);
  return false;
}

/**
 * Unavailable (REST 503 with Retry-After, gRPC UNAVAILABLE): the call may succeed when retried,
 * unlike the Internal an unexpected error becomes. `connectionLost` is the adapter's own
 * knowledge that the connection failed under the call, whatever the error says. Other errors
 * pass through unchanged.
 */
export function asDatabaseUnavailable(error: unknown, connectionLost = false): unknown {
  if (!connectionLost && !isConnectionError(error)) return error;
  return new AtriumError(Code.Unavailable, "database unavailable", {
    cause: error,
    retryAfterSeconds: databaseRetryAfterSeconds,
  });
}
