import {
  AtriumError,
  Code,
  codeForHttpStatus,
  fixedErrorFrom,
  fixedErrorFromBody,
} from "@atrium/kit";
import { ConnectError } from "@connectrpc/connect";

/**
 * The broker's advice on when to retry (REST `Retry-After`, gRPC `retry-after` metadata), passed
 * on to the gateway's caller: it is the broker that knows when its database is back.
 */
function retryAfterSeconds(value: string | null | undefined): number | undefined {
  if (!value || !/^\d+$/.test(value.trim())) return undefined;
  return Number(value.trim());
}

/**
 * A broker error that arrived over gRPC, as the gateway answers it on both of its transports: a
 * fixed error (kit's registry) with the contract's REST status and body, rebuilt from its
 * ErrorInfo detail; any other with its code and message.
 */
export function fromBrokerGrpcError(error: ConnectError): AtriumError {
  const options = {
    cause: error,
    retryAfterSeconds: retryAfterSeconds(error.metadata.get("retry-after")),
  };
  // First: the broker refusing the gateway itself (its key, or its address: ipNotAllowed) is
  // the gateway's fault, not its caller's.
  if (error.code === Code.Unauthenticated || error.code === Code.PermissionDenied) {
    return brokerRejectedGateway(error);
  }
  return fixedErrorFrom(error, options) ?? new AtriumError(error.code, error.rawMessage, options);
}

/**
 * A broker error that arrived over REST: its status, body and `Retry-After` go to the caller
 * unchanged; gRPC callers get the code the body names, or the one the status maps to.
 */
export function fromBrokerRestError(
  status: number,
  body: unknown,
  retryAfter?: string | null,
): AtriumError {
  const record =
    typeof body === "object" && body !== null ? (body as Record<string, unknown>) : undefined;
  const message =
    typeof record?.message === "string" ? record.message : `broker answered ${status}`;
  if (status === 401 || status === 403) return brokerRejectedGateway(new Error(message));
  const options = { retryAfterSeconds: retryAfterSeconds(retryAfter) };
  const fixed = record && fixedErrorFromBody(status, record, message, options);
  if (fixed) return fixed;
  const named =
    typeof record?.code === "string" ? Code[record.code as keyof typeof Code] : undefined;
  const code = typeof named === "number" ? named : codeForHttpStatus(status);
  return new AtriumError(code, message, {
    ...options,
    httpStatus: status,
    httpBody: record ?? { code: Code[code], message },
  });
}

/**
 * The broker refusing the gateway's own key is a deployment fault, not the caller's: answering
 * 401/403 would tell an agent its (correct) gateway key is wrong.
 */
function brokerRejectedGateway(cause: unknown): AtriumError {
  return new AtriumError(Code.Unavailable, "the broker rejected the gateway's BROKER_API_KEY", {
    cause,
  });
}

const transportErrorCodes =
  /^(E[A-Z]+|ERR_HTTP2_[A-Z_]+|ERR_STREAM_PREMATURE_CLOSE|UND_ERR_[A-Z_]+)$/;

/**
 * Whether a gRPC call failed in transport: refused, reset, unreachable, the HTTP/2 session torn
 * down under the stream (Canceled although our caller did not cancel), or our deadline. Only these
 * are retried over REST: an application error, Unavailable included, is the broker's answer and
 * must not be asked twice.
 */
export function isTransportFailure(error: unknown, callerSignal?: AbortSignal): boolean {
  if (!(error instanceof ConnectError)) return false;
  if (error.code === Code.DeadlineExceeded) return true;
  if (error.code === Code.Canceled) return callerSignal?.aborted !== true;
  if (![Code.Unavailable, Code.Unknown, Code.Internal].includes(error.code)) return false;
  for (let cause: unknown = error.cause, depth = 0; cause && depth < 5; depth++) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === "string" && transportErrorCodes.test(code)) return true;
    cause = (cause as { cause?: unknown }).cause;
  }
  return false;
}
