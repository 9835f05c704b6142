import type { FastifyError } from "fastify";
import { AtriumError, Code, toAtriumError } from "../errors.js";

const codeByClientStatus: Record<number, Code> = {
  401: Code.Unauthenticated,
  403: Code.PermissionDenied,
  404: Code.NotFound,
  409: Code.AlreadyExists,
  412: Code.FailedPrecondition,
  413: Code.ResourceExhausted,
  429: Code.ResourceExhausted,
};

/**
 * Fastify's own failures (malformed JSON, body too large, unsupported media type) carry a 4xx
 * status and a message meant for the caller; keep both. Anything else, including other errors
 * that carry a statusCode (an upstream client's, say), goes through toAtriumError, which hides
 * what is not ours behind a generic Internal.
 */
export function normalizeRestError(error: unknown): AtriumError {
  if (error instanceof AtriumError) return error;
  const { statusCode: status, code: fastifyCode } = (error ?? {}) as Partial<FastifyError>;
  if (fastifyCode?.startsWith("FST_") && status !== undefined && status >= 400 && status < 500) {
    const code = codeByClientStatus[status] ?? Code.InvalidArgument;
    return new AtriumError(code, (error as Error).message, { httpStatus: status, cause: error });
  }
  return toAtriumError(error);
}
