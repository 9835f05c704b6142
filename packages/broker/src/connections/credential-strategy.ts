/** How a caller presents a connection's credential to the provider's API. */
export interface CredentialStrategy {
  /** oauth2, api_key, basic_auth, query_param, hmac_payload or aws_sigv4; empty for SAML. */
  type: string;
  headerName: string;
  headerPrefix: string;
  paramName: string;
  region: string;
  service: string;
}

const naturalStrategy: Record<string, string> = {
  oauth2: "oauth2",
  api_key: "api_key",
  basic_auth: "basic_auth",
};

/**
 * The strategy named by the provider's params (`credential_strategy`, `credential_header`,
 * `credential_header_prefix`, `credential_query_param`, `aws_region`, `aws_service`), else the
 * natural one of its auth type; SAML assertions have none.
 */
export function credentialStrategy(
  authType: string,
  params: Record<string, string>,
): CredentialStrategy {
  return {
    type: params.credential_strategy ?? naturalStrategy[authType] ?? "",
    headerName: params.credential_header ?? "",
    headerPrefix: params.credential_header_prefix ?? "",
    paramName: params.credential_query_param ?? "",
    region: params.aws_region ?? "",
    service: params.aws_service ?? "",
  };
}
