import { ErrorInfoSchema } from "@atrium/api";
import { create } from "@bufbuild/protobuf";
import type { Code, ConnectError } from "@connectrpc/connect";
import { AtriumError } from "./errors.js";

/** `google.rpc.ErrorInfo.domain` of every fixed error. */
export const fixedErrorDomain = "atrium";

/**
 * One error a contract fixes: its name (the reason), its gRPC code and its REST status and body.
 * Over gRPC the reason and the params travel as `google.rpc.ErrorInfo` (reason, domain,
 * metadata), so a service that relays the error rebuilds it without reading its message.
 */
export interface FixedErrorSpec<P extends string> {
  reason: string;
  code: Code;
  httpStatus: number;
  /** The REST body field that names the reason: `code`, or `error` where the contract says so. */
  bodyField: "code" | "error";
  /** What the error is about; sent as ErrorInfo metadata. */
  params: readonly P[];
  // Methods, not function properties, so that a spec of any params is a FixedErrorSpec<string>.
  /** The message gRPC callers and logs see. */
  message(params: Readonly<Record<P, string>>): string;
  /** The REST body's `message`; without it the body holds the reason only. */
  restMessage?(params: Readonly<Record<P, string>>): string;
  /**
   * The error class name the SDKs (TypeScript with an `Error` suffix, Python, Go with `Error`)
   * and the conformance vectors give it, for the errors they type; test/error-registry.test.ts
   * holds them to it.
   */
  sdkName?: string;
}

export interface FixedErrorOptions {
  cause?: unknown;
  retryAfterSeconds?: number;
}

export interface FixedError<P extends string> {
  (params: Readonly<Record<P, string>>, options?: FixedErrorOptions): AtriumError;
  readonly spec: FixedErrorSpec<P>;
}

/** The factory that throws a fixed error, in the model of fastify's `createError`. */
export function defineFixedError<const P extends string>(spec: FixedErrorSpec<P>): FixedError<P> {
  const build = (params: Readonly<Record<P, string>>, options: FixedErrorOptions = {}) =>
    new AtriumError(spec.code, spec.message(params), {
      ...options,
      httpStatus: spec.httpStatus,
      httpBody: fixedErrorBody(spec, params),
      details: [errorInfoDetail(spec.reason, params)],
    });
  return Object.assign(build, { spec });
}

/** The REST body the contract fixes for this error. */
export function fixedErrorBody<P extends string>(
  spec: FixedErrorSpec<P>,
  params: Readonly<Record<P, string>>,
): Record<string, unknown> {
  const body: Record<string, unknown> = { [spec.bodyField]: spec.reason };
  if (spec.restMessage) body.message = spec.restMessage(params);
  return body;
}

/** The fixed error's reason and params an error carries as ErrorInfo, when it carries one. */
export function errorInfoOf(
  error: ConnectError,
): { reason: string; params: Record<string, string> } | undefined {
  const info = error
    .findDetails(ErrorInfoSchema)
    .find((detail) => detail.domain === fixedErrorDomain);
  return info && { reason: info.reason, params: info.metadata };
}

/** The ErrorInfo detail of a fixed error. */
export function errorInfoDetail(
  reason: string,
  params: Readonly<Record<string, string>> = {},
): ConnectError["details"][number] {
  return {
    desc: ErrorInfoSchema,
    value: create(ErrorInfoSchema, { reason, domain: fixedErrorDomain, metadata: { ...params } }),
  };
}
