import type { ConnectError } from "@connectrpc/connect";
import { AtriumError } from "./errors.js";
import {
  errorInfoDetail,
  errorInfoOf,
  type FixedErrorOptions,
  type FixedErrorSpec,
  fixedErrorBody,
} from "./fixed-error.js";
import { fixedErrors } from "./fixed-errors.js";

const specByReason = new Map<string, FixedErrorSpec<string>>(
  fixedErrors.map(({ spec }) => [spec.reason, spec]),
);

/**
 * A fixed error another service sent over gRPC, as this one answers it on both transports: the
 * same code and message, the contract's REST status and body rebuilt from the ErrorInfo detail.
 * Undefined for any other error.
 */
export function fixedErrorFrom(
  error: ConnectError,
  options: FixedErrorOptions = {},
): AtriumError | undefined {
  const info = errorInfoOf(error);
  const spec = info && specByReason.get(info.reason);
  if (!info || !spec) return undefined;
  const params = Object.fromEntries(spec.params.map((name) => [name, info.params[name] ?? ""]));
  return new AtriumError(error.code, error.rawMessage, {
    ...options,
    httpStatus: spec.httpStatus,
    httpBody: fixedErrorBody(spec, params),
    details: [errorInfoDetail(spec.reason, params)],
  });
}

/**
 * A fixed error another service answered over REST, relayed with its status and body unchanged;
 * gRPC callers get the registry's code and the reason as ErrorInfo. Undefined for any other body.
 */
export function fixedErrorFromBody(
  status: number,
  body: Record<string, unknown>,
  message: string,
  options: FixedErrorOptions = {},
): AtriumError | undefined {
  const spec = [...specByReason.values()].find(
    (candidate) =>
      candidate.httpStatus === status && body[candidate.bodyField] === candidate.reason,
  );
  if (!spec) return undefined;
  return new AtriumError(spec.code, message, {
    ...options,
    httpStatus: status,
    httpBody: body,
    details: [errorInfoDetail(spec.reason)],
  });
}
