import { X509Certificate } from "node:crypto";
import type { ProviderField } from "./provider-fields.js";

/**
 * The provider registration rules, shared by the broker (POST/PUT/PATCH /providers) and the
 * manifest tool's offline `validate`. Pure: no I/O, no clock, every finding reported at once.
 */

export const AUTH_TYPES = ["oauth2", "saml", "api_key", "basic_auth"] as const;
export type AuthType = (typeof AUTH_TYPES)[number];

/**
 * A provider definition as a client or a manifest sends it. Values are `unknown` on purpose: the
 * manifest tool passes parsed YAML as is, and wrong types are findings, not crashes.
 */
export type ProviderInput = { [K in ProviderField]?: unknown };

export interface RuleFinding {
  /** Provider field the finding is about, e.g. `token_url` or `params.token_request_format`. */
  field: string;
  message: string;
}

export interface ProviderRuleOptions {
  /** A `${PLACEHOLDER}` value counts as present and skips format checks (offline validate). */
  placeholdersPresent?: boolean;
  /** The broker already holds a client secret for this provider (updates that omit it). */
  clientSecretStored?: boolean;
}

export const PROVIDER_NAME_PATTERN = /^[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*$/;
export const PROVIDER_NAME_MAX_LENGTH = 64;

const PLACEHOLDER = /\$\{[A-Za-z_][A-Za-z0-9_]*\}/;
const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

const URL_FIELDS = [
  "auth_url",
  "token_url",
  "issuer",
  "well_known_url",
  "api_base_url",
  "user_info_endpoint",
  "saml_idp_sso_url",
] as const;

const STRING_FIELDS = [
  "client_id",
  "client_secret",
  "description",
  "category",
  "saml_idp_entity_id",
  "saml_sp_entity_id",
  "saml_idp_x509_cert",
] as const;

export function isPlaceholderValue(value: unknown): boolean {
  return typeof value === "string" && PLACEHOLDER.test(value);
}

export function validateProviderRegistration(
  input: ProviderInput,
  options: ProviderRuleOptions = {},
): RuleFinding[] {
  const findings: RuleFinding[] = [];
  const add = (field: string, message: string) => findings.push({ field, message });
  const placeholder = (v: unknown) => options.placeholdersPresent === true && isPlaceholderValue(v);
  const present = (v: unknown) =>
    v !== undefined && v !== null && !(typeof v === "string" && v.trim() === "");

  checkName(input.name, add, placeholder);

  for (const field of STRING_FIELDS) {
    const v = input[field];
    if (v !== undefined && v !== null && typeof v !== "string") add(field, "must be a string");
  }
  for (const field of URL_FIELDS) {
    const v = input[field];
    if (!present(v) || placeholder(v)) continue;
    const problem = urlProblem(v);
    if (problem) add(field, problem);
  }
  checkScopes(input.scopes, add);
  checkParams(input.params, add, placeholder);
  if (
    input.enable_discovery !== undefined &&
    input.enable_discovery !== null &&
    typeof input.enable_discovery !== "boolean"
  ) {
    add("enable_discovery", "must be true or false");
  }

  const authType = input.auth_type;
  if (!present(authType)) {
    add("auth_type", `is required (one of ${AUTH_TYPES.join(", ")})`);
    return findings;
  }
  if (placeholder(authType)) return findings;
  if (typeof authType !== "string" || !(AUTH_TYPES as readonly string[]).includes(authType)) {
    add(
      "auth_type",
      `unsupported auth_type ${JSON.stringify(authType)}; use one of ${AUTH_TYPES.join(", ")}`,
    );
    return findings;
  }

  if (authType === "oauth2") {
    if (!present(input.client_id)) add("client_id", "is required for auth_type oauth2");
    if (!present(input.client_secret) && !options.clientSecretStored) {
      add("client_secret", "is required for auth_type oauth2");
    }
    checkOAuthEndpoints(input, add, present);
  } else if (authType === "saml") {
    for (const field of [
      "saml_idp_entity_id",
      "saml_idp_sso_url",
      "saml_idp_x509_cert",
      "saml_sp_entity_id",
    ] as const) {
      if (!present(input[field])) add(field, "is required for auth_type saml");
    }
    for (const field of ["saml_idp_entity_id", "saml_sp_entity_id"] as const) {
      const v = input[field];
      if (typeof v === "string" && present(v) && !placeholder(v) && /\s/.test(v.trim())) {
        add(field, "must be a URI without whitespace");
      }
    }
    const cert = input.saml_idp_x509_cert;
    if (typeof cert === "string" && present(cert) && !placeholder(cert)) {
      const problem = x509Problem(cert);
      if (problem) add("saml_idp_x509_cert", problem);
    }
  }
  return findings;
}

function checkName(
  name: unknown,
  add: (field: string, message: string) => void,
  placeholder: (v: unknown) => boolean,
): void {
  if (name === undefined || name === null || name === "") {
    add("name", "is required");
    return;
  }
  if (placeholder(name)) return;
  if (typeof name !== "string") {
    add("name", "must be a string");
    return;
  }
  if (name.length > PROVIDER_NAME_MAX_LENGTH || !PROVIDER_NAME_PATTERN.test(name)) {
    add(
      "name",
      `must be 1-${PROVIDER_NAME_MAX_LENGTH} characters: lower-case letters and digits, starting with a letter, words joined by single "-" or "_"`,
    );
  }
}

function checkScopes(scopes: unknown, add: (field: string, message: string) => void): void {
  if (scopes === undefined || scopes === null) return;
  if (!Array.isArray(scopes)) {
    add("scopes", "must be a list of strings");
    return;
  }
  scopes.forEach((scope, i) => {
    if (typeof scope !== "string" || scope.trim() === "" || /\s/.test(scope)) {
      add(`scopes[${i}]`, "must be a non-empty string without whitespace");
    }
  });
}

function checkParams(
  params: unknown,
  add: (field: string, message: string) => void,
  placeholder: (v: unknown) => boolean,
): void {
  if (params === undefined || params === null) return;
  if (typeof params !== "object" || Array.isArray(params)) {
    add("params", "must be a map of names to scalar values");
    return;
  }
  for (const [key, value] of Object.entries(params)) {
    const field = `params.${key}`;
    if (!["string", "number", "boolean"].includes(typeof value)) {
      add(field, "must be a string, number or boolean");
      continue;
    }
    if (placeholder(value)) continue;
    const text = String(value);
    if (key === "token_request_format" && text !== "json" && text !== "form") {
      add(field, 'must be "json" or "form"');
    }
    if (key === "skip_scope_on_auth" && text !== "true" && text !== "false") {
      add(field, "must be true or false");
    }
  }
}

function checkOAuthEndpoints(
  input: ProviderInput,
  add: (field: string, message: string) => void,
  present: (v: unknown) => boolean,
): void {
  const hasIssuer = present(input.issuer);
  const hasWellKnown = present(input.well_known_url);
  const hasAuth = present(input.auth_url);
  const hasToken = present(input.token_url);
  if (input.enable_discovery === true) {
    if (!hasIssuer && !hasWellKnown) {
      add("issuer", "is required when enable_discovery is true (or set well_known_url)");
    }
    return;
  }
  if (input.enable_discovery === false) {
    if (!hasAuth) add("auth_url", "is required when enable_discovery is false");
    if (!hasToken) add("token_url", "is required when enable_discovery is false");
    if (hasWellKnown) add("well_known_url", "is only used when enable_discovery is true");
    return;
  }
  // Discovery unset: an issuer (or well-known URL) enables discovery; without one the explicit
  // endpoints are the only source and both are needed.
  if (!hasIssuer && !hasWellKnown) {
    if (!hasAuth) add("auth_url", "is required without issuer or well_known_url");
    if (!hasToken) add("token_url", "is required without issuer or well_known_url");
  }
}

/** https everywhere; plain http only for loopback hosts (local development and tests). */
export function urlProblem(value: unknown): string | undefined {
  if (typeof value !== "string") return "must be a URL string";
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "must be an absolute URL";
  }
  if (url.protocol === "https:") return url.hostname ? undefined : "must name a host";
  if (url.protocol === "http:") {
    return LOOPBACK_HOSTS.has(url.hostname) ? undefined : "must use https (http only for loopback)";
  }
  return "must be an http(s) URL";
}

/** Accepts a PEM certificate or its bare base64 body, as IdP metadata usually carries it. */
export function x509Problem(value: string): string | undefined {
  const pem = value.includes("-----BEGIN CERTIFICATE-----")
    ? value
    : `-----BEGIN CERTIFICATE-----\n${value.replace(/\s+/g, "")}\n-----END CERTIFICATE-----\n`;
  try {
    new X509Certificate(pem);
    return undefined;
  } catch {
    return "must be an X.509 certificate (PEM or base64 DER)";
  }
}
