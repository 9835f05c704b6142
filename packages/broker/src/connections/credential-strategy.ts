import type { brokerV1 } from "@atrium/api";

/**
 * How a caller presents a connection's credential to the provider's API, as the token carries it:
 * type is oauth2, api_key, basic_auth, query_param, hmac_payload or aws_sigv4, empty for SAML.
 */
export type CredentialStrategy = Omit<brokerV1.CredentialStrategy, "$typeName">;

const naturalStrategy: Record<string, string> = {
  oauth2: "oauth2",
  api_key: "api_key",
  basic_auth: "basic_auth",
};

/**
 * Names an earlier release used for how a static key is presented, and the ones that replaced
 * them. The old ones are still read, with a warning, where the new one is absent.
 */
export const DEPRECATED_CREDENTIAL_PARAMS: Readonly<Record<string, string>> = {
  api_key_header: "credential_header",
  api_key_prefix: "credential_header_prefix",
};

/** The deprecated parameter names a provider's params still use. */
export function deprecatedCredentialParams(params: Record<string, string>): string[] {
  return Object.keys(DEPRECATED_CREDENTIAL_PARAMS).filter((name) => params[name] !== undefined);
}

/**
 * The strategy named by the provider's params (`credential_strategy`, `credential_header`,
 * `credential_header_prefix`, `credential_query_param`, `aws_region`, `aws_service`), else the
 * natural one of its auth type; SAML assertions have none. One rule for both uses: the broker
 * presents a captured key this way to validate it, and the SDKs inject it this way.
 */
export function credentialStrategy(
  authType: string,
  params: Record<string, string>,
): CredentialStrategy {
  const headerName = params.credential_header ?? params.api_key_header ?? "";
  // The old names defaulted to `Authorization: Bearer`; a provider still on them keeps that.
  const legacyBearer =
    params.credential_header === undefined &&
    params.api_key_header?.toLowerCase() === "authorization";
  return {
    type: params.credential_strategy ?? naturalStrategy[authType] ?? "",
    headerName,
    headerPrefix:
      params.credential_header_prefix ?? params.api_key_prefix ?? (legacyBearer ? "Bearer " : ""),
    paramName: params.credential_query_param ?? "",
    region: params.aws_region ?? "",
    service: params.aws_service ?? "",
  };
}
