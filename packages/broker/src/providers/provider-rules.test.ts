import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { generate } from "selfsigned";
import { type ProviderInput, validateProviderRegistration } from "./provider-rules.js";

/** A manifest `${NAME}` placeholder, built so it does not read as a template literal. */
const placeholder = (name: string) => `$${"{"}${name}}`;

const fields = (input: ProviderInput, opts?: Parameters<typeof validateProviderRegistration>[1]) =>
  validateProviderRegistration(input, opts).map((f) => f.field);

describe("validateProviderRegistration", () => {
  let certPem = "";
  before(async () => {
    certPem = (await generate([{ name: "commonName", value: "idp.test" }], { keySize: 2048 })).cert;
  });

  it("accepts a complete oauth2 provider with explicit endpoints", () => {
    assert.deepEqual(
      validateProviderRegistration({
        name: "github",
        auth_type: "oauth2",
        client_id: "id",
        client_secret: "s",
        auth_url: "https://github.com/login/oauth/authorize",
        token_url: "https://github.com/login/oauth/access_token",
        scopes: ["repo", "read:user"],
        params: { token_request_format: "json", skip_scope_on_auth: true, retries: 1.5 },
      }),
      [],
    );
  });

  it("accepts oauth2 with an issuer (discovery) and no explicit endpoints", () => {
    assert.deepEqual(
      fields({
        name: "google",
        auth_type: "oauth2",
        client_id: "id",
        client_secret: "s",
        issuer: "https://accounts.google.com",
      }),
      [],
    );
  });

  it("reports every finding at once", () => {
    const found = fields({
      name: "Bad Name",
      auth_type: "oauth2",
      auth_url: "ftp://x",
      scopes: ["ok", ""],
      params: { token_request_format: "xml" },
    });
    assert.deepEqual(found.sort(), [
      "auth_url",
      "client_id",
      "client_secret",
      "name",
      "params.token_request_format",
      "scopes[1]",
      "token_url",
    ]);
  });

  it("rejects unsupported and missing auth_type", () => {
    assert.deepEqual(fields({ name: "x1", auth_type: "aws_sigv4" }), ["auth_type"]);
    assert.deepEqual(fields({ name: "x1" }), ["auth_type"]);
  });

  it("applies the discovery rules", () => {
    const base = { name: "p", auth_type: "oauth2", client_id: "i", client_secret: "s" };
    assert.deepEqual(fields({ ...base, enable_discovery: true }), ["issuer"]);
    assert.deepEqual(fields({ ...base, enable_discovery: false, issuer: "https://i.example" }), [
      "auth_url",
      "token_url",
    ]);
    assert.deepEqual(fields({ ...base, enable_discovery: "yes", issuer: "https://i.example" }), [
      "enable_discovery",
    ]);
  });

  it("allows plain http only on loopback", () => {
    const base = { name: "p", auth_type: "oauth2", client_id: "i", client_secret: "s" };
    assert.deepEqual(fields({ ...base, issuer: "http://127.0.0.1:3000" }), []);
    assert.deepEqual(fields({ ...base, issuer: "http://idp.example.com" }), ["issuer"]);
  });

  it("checks SAML required fields, URLs and the X.509 certificate", () => {
    const saml = {
      name: "okta-saml",
      auth_type: "saml",
      saml_idp_entity_id: "https://idp.example.com/entity",
      saml_idp_sso_url: "https://idp.example.com/sso",
      saml_idp_x509_cert: certPem,
      saml_sp_entity_id: "urn:atrium:sp",
    };
    assert.deepEqual(fields(saml), []);
    const bare = certPem.replace(/-----(BEGIN|END) CERTIFICATE-----/g, "").replace(/\s+/g, "");
    assert.deepEqual(fields({ ...saml, saml_idp_x509_cert: bare }), []);
    assert.deepEqual(
      fields({ ...saml, saml_idp_sso_url: "not a url", saml_idp_x509_cert: "garbage" }).sort(),
      ["saml_idp_sso_url", "saml_idp_x509_cert"],
    );
    assert.deepEqual(fields({ name: "s", auth_type: "saml" }).sort(), [
      "saml_idp_entity_id",
      "saml_idp_sso_url",
      "saml_idp_x509_cert",
      "saml_sp_entity_id",
    ]);
  });

  it("counts placeholders as present only when asked", () => {
    const input = {
      name: "acme",
      auth_type: "oauth2",
      client_id: placeholder("ACME_CLIENT_ID"),
      client_secret: placeholder("ACME_CLIENT_SECRET"),
      token_url: placeholder("ACME_TOKEN_URL"),
      auth_url: "https://acme.example/authorize",
    };
    assert.deepEqual(fields(input, { placeholdersPresent: true }), []);
    assert.deepEqual(fields(input), ["token_url"]);
  });

  it("lets updates rely on a stored client secret", () => {
    const input = {
      name: "acme",
      auth_type: "oauth2",
      client_id: "i",
      issuer: "https://acme.example",
    };
    assert.deepEqual(fields(input), ["client_secret"]);
    assert.deepEqual(fields(input, { clientSecretStored: true }), []);
  });

  it("accepts static credential providers without endpoints", () => {
    assert.deepEqual(fields({ name: "stripe", auth_type: "api_key" }), []);
    assert.deepEqual(
      fields({ name: "jira", auth_type: "basic_auth", api_base_url: "http://jira.example" }),
      ["api_base_url"],
    );
  });
});
