import { AtriumError, Code } from "@atrium/kit";
import { ConnectError } from "@connectrpc/connect";

/**
 * The broker's spec-fixed REST bodies. Over gRPC the broker sends the code and a message ending
 * in "(<token>)", so the gateway rebuilds the same status and body from that token whichever
 * transport carried the call.
 */
const fixedAnswers: Record<
  string,
  { status: number; body: (message: string) => Record<string, unknown> }
> = {
  attention_required: { status: 409, body: () => ({ error: "attention_required" }) },
  connection_revoked: { status: 410, body: () => ({ code: "connection_revoked" }) },
  connection_not_active: {
    status: 400,
    body: (message) => ({ code: "connection_not_active", message }),
  },
  provider_not_validatable: {
    status: 422,
    body: (message) => ({ code: "provider_not_validatable", message }),
  },
  invalid_credentials: {
    status: 422,
    body: (message) => ({ code: "invalid_credentials", message }),
  },
};

const codeByStatus: Record<number, Code> = {
  400: Code.InvalidArgument,
  401: Code.Unauthenticated,
  403: Code.PermissionDenied,
  404: Code.NotFound,
  409: Code.FailedPrecondition,
  410: Code.FailedPrecondition,
  412: Code.FailedPrecondition,
  422: Code.FailedPrecondition,
  429: Code.ResourceExhausted,
  501: Code.Unimplemented,
  503: Code.Unavailable,
  504: Code.DeadlineExceeded,
};

/**
 * The broker's advice on when to retry (REST `Retry-After`, gRPC `retry-after` metadata), passed
 * on to the gateway's caller: it is the broker that knows when its database is back.
 */
function retryAfterSeconds(value: string | null | undefined): number | undefined {
  if (!value || !/^\d+$/.test(value.trim())) return undefined;
  return Number(value.trim());
}

/** A broker error that arrived over gRPC, as the gateway answers it on both of its transports. */
export function fromBrokerGrpcError(error: ConnectError): AtriumError {
  const message = error.rawMessage;
  const retryAfter = retryAfterSeconds(error.metadata.get("retry-after"));
  const token = /\(([a-z_]+)\)\s*$/.exec(message)?.[1];
  const fixed = token === undefined ? undefined : fixedAnswers[token];
  if (fixed) {
    // The broker's REST message for connection_not_active is "connection is <status>".
    const status = / is ([a-z_]+) \(connection_not_active\)\s*$/.exec(message)?.[1];
    const plain = status ? `connection is ${status}` : message.replace(/\s*\([a-z_]+\)\s*$/, "");
    return new AtriumError(error.code, plain, {
      httpStatus: fixed.status,
      httpBody: fixed.body(plain),
      cause: error,
      retryAfterSeconds: retryAfter,
    });
  }
  if (error.code === Code.Unauthenticated || error.code === Code.PermissionDenied) {
    return brokerRejectedGateway(error);
  }
  return new AtriumError(error.code, message, { cause: error, retryAfterSeconds: retryAfter });
}

/**
 * A broker error that arrived over REST: its status, body and `Retry-After` go to the caller
 * unchanged.
 */
export function fromBrokerRestError(
  status: number,
  body: unknown,
  retryAfter?: string | null,
): AtriumError {
  const record =
    typeof body === "object" && body !== null ? (body as Record<string, unknown>) : undefined;
  const named =
    typeof record?.code === "string" ? Code[record.code as keyof typeof Code] : undefined;
  const code = typeof named === "number" ? named : (codeByStatus[status] ?? Code.Internal);
  const message =
    typeof record?.message === "string" ? record.message : `broker answered ${status}`;
  if (status === 401 || status === 403) return brokerRejectedGateway(new Error(message));
  return new AtriumError(code, message, {
    httpStatus: status,
    httpBody: record ?? { code: Code[code], message },
    retryAfterSeconds: retryAfterSeconds(retryAfter),
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
