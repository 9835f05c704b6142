import { AtriumError, Code } from "@atrium/kit";

// Bodies the spec fixes are kept exactly on REST; gRPC callers get the code and the message.

export const attentionRequired = (id: string) =>
  new AtriumError(
    Code.FailedPrecondition,
    `connection ${id} needs a new consent (attention_required)`,
    {
      httpStatus: 409,
      httpBody: { error: "attention_required" },
    },
  );

export const connectionRevoked = (id: string) =>
  new AtriumError(Code.FailedPrecondition, `connection ${id} was revoked (connection_revoked)`, {
    httpStatus: 410,
    httpBody: { code: "connection_revoked" },
  });

export const connectionNotActive = (id: string, status: string) =>
  new AtriumError(
    Code.FailedPrecondition,
    `connection ${id} is ${status} (connection_not_active)`,
    {
      httpStatus: 400,
      httpBody: { code: "connection_not_active", message: `connection is ${status}` },
    },
  );

/** 404 whether the id is unknown or belongs to another workspace: ids are not confirmed. */
export const connectionNotFound = (id: string) =>
  new AtriumError(Code.NotFound, `connection ${id} not found`);

export const providerNotValidatable = (providerId: string) =>
  new AtriumError(
    Code.FailedPrecondition,
    `provider ${providerId} has neither api_base_url nor user_info_endpoint (provider_not_validatable)`,
    {
      httpStatus: 422,
      httpBody: {
        code: "provider_not_validatable",
        message: "provider has neither api_base_url nor user_info_endpoint",
      },
    },
  );

export const invalidCredentials = (status: number) =>
  new AtriumError(Code.InvalidArgument, `provider rejected the credential (invalid_credentials)`, {
    httpStatus: 422,
    httpBody: { code: "invalid_credentials", message: `provider answered ${status}` },
  });

export const providerUnavailable = (message: string) =>
  new AtriumError(Code.Unavailable, message, {
    httpBody: { code: "provider_unavailable", message },
  });
