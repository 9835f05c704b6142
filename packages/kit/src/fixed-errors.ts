import { Code } from "@connectrpc/connect";
import { defineFixedError } from "./fixed-error.js";

// The errors the contracts fix, declared once: the broker throws them, the gateway relays them
// (fixed-error-relay.ts), the OpenAPI documents describe them and test/error-registry.test.ts
// holds the SDKs' error classes and the conformance vectors to them.

/** 409 `{"error":"attention_required"}`: a refresh was refused; a person must consent again. */
export const attentionRequired = defineFixedError({
  reason: "attention_required",
  code: Code.FailedPrecondition,
  httpStatus: 409,
  bodyField: "error",
  params: ["connection_id"],
  message: (p) => `connection ${p.connection_id} needs a new consent`,
  sdkName: "AttentionRequired",
});

/** 410 `{"code":"connection_revoked"}`: terminal; the client starts a new connection flow. */
export const connectionRevoked = defineFixedError({
  reason: "connection_revoked",
  code: Code.FailedPrecondition,
  httpStatus: 410,
  bodyField: "code",
  params: ["connection_id"],
  message: (p) => `connection ${p.connection_id} was revoked`,
  sdkName: "ConnectionRevoked",
});

/** 400: a token or refresh for a connection that is neither active nor revoked. */
export const connectionNotActive = defineFixedError({
  reason: "connection_not_active",
  code: Code.FailedPrecondition,
  httpStatus: 400,
  bodyField: "code",
  params: ["connection_id", "status"],
  message: (p) => `connection ${p.connection_id} is ${p.status}`,
  restMessage: (p) => `connection is ${p.status}`,
  sdkName: "ConnectionNotActive",
});

/** 403 before authentication: the caller's address is outside ALLOWED_CIDRS. */
export const ipNotAllowed = defineFixedError({
  reason: "ip_not_allowed",
  code: Code.PermissionDenied,
  httpStatus: 403,
  bodyField: "code",
  params: [],
  message: () => "caller address is not allowed",
  restMessage: () => "caller address is not allowed",
});

/** A static credential for a provider that offers nothing to check it against. */
export const providerNotValidatable = defineFixedError({
  reason: "provider_not_validatable",
  code: Code.FailedPrecondition,
  httpStatus: 422,
  bodyField: "code",
  params: ["provider_id"],
  message: (p) => `provider ${p.provider_id} has neither api_base_url nor user_info_endpoint`,
  restMessage: () => "provider has neither api_base_url nor user_info_endpoint",
});

/** The provider answered 401 or 403 to a static credential. */
export const invalidCredentials = defineFixedError({
  reason: "invalid_credentials",
  code: Code.InvalidArgument,
  httpStatus: 422,
  bodyField: "code",
  params: ["provider_status"],
  message: () => "provider rejected the credential",
  restMessage: (p) => `provider answered ${p.provider_status}`,
});

/** The provider could not be reached or failed; a retry may succeed. */
export const providerUnavailable = defineFixedError({
  reason: "provider_unavailable",
  code: Code.Unavailable,
  httpStatus: 503,
  bodyField: "code",
  params: ["detail"],
  message: (p) => p.detail,
  restMessage: (p) => p.detail,
});

export const fixedErrors = [
  attentionRequired,
  connectionRevoked,
  connectionNotActive,
  ipNotAllowed,
  providerNotValidatable,
  invalidCredentials,
  providerUnavailable,
] as const;
