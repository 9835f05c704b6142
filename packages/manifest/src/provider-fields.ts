/** Provider profile fields a manifest may set; the broker computes id and secret metadata itself. */
export const providerFields = [
  "name",
  "auth_type",
  "client_id",
  "client_secret",
  "scopes",
  "auth_url",
  "token_url",
  "issuer",
  "enable_discovery",
  "well_known_url",
  "api_base_url",
  "user_info_endpoint",
  "description",
  "category",
  "params",
  "saml_idp_entity_id",
  "saml_idp_sso_url",
  "saml_idp_x509_cert",
  "saml_sp_entity_id",
] as const;

export type ProviderField = (typeof providerFields)[number];

const known = new Set<string>(providerFields);

export function isProviderField(name: string): name is ProviderField {
  return known.has(name);
}
