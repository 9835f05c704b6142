import assert from "node:assert/strict";
import { test } from "node:test";
import { credentialStrategy, deprecatedCredentialParams } from "./credential-strategy.js";

test("the natural strategy of each auth type, with the SDKs' defaults left to them", () => {
  assert.deepEqual(credentialStrategy("api_key", {}), {
    type: "api_key",
    headerName: "",
    headerPrefix: "",
    paramName: "",
    region: "",
    service: "",
  });
  assert.equal(credentialStrategy("oauth2", {}).type, "oauth2");
  assert.equal(credentialStrategy("basic_auth", {}).type, "basic_auth");
  assert.equal(credentialStrategy("saml", {}).type, "");
});

test("the credential_* names set the header, prefix and query parameter", () => {
  const strategy = credentialStrategy("api_key", {
    credential_strategy: "query_param",
    credential_header: "X-Key",
    credential_header_prefix: "Token ",
    credential_query_param: "key",
  });
  assert.equal(strategy.type, "query_param");
  assert.equal(strategy.headerName, "X-Key");
  assert.equal(strategy.headerPrefix, "Token ");
  assert.equal(strategy.paramName, "key");
  assert.deepEqual(deprecatedCredentialParams({ credential_header: "X-Key" }), []);
});

test("the old api_key_* names still work where the new ones are absent, and are reported", () => {
  // The old default: Authorization named without a prefix meant Bearer.
  assert.deepEqual(pick(credentialStrategy("api_key", { api_key_header: "Authorization" })), [
    "Authorization",
    "Bearer ",
  ]);
  assert.deepEqual(
    pick(credentialStrategy("api_key", { api_key_header: "X-Key", api_key_prefix: "K " })),
    ["X-Key", "K "],
  );
  assert.deepEqual(
    pick(credentialStrategy("api_key", { api_key_header: "X-Old", credential_header: "X-New" })),
    ["X-New", ""],
  );
  assert.deepEqual(deprecatedCredentialParams({ api_key_header: "a", api_key_prefix: "b" }), [
    "api_key_header",
    "api_key_prefix",
  ]);
});

const pick = (s: { headerName: string; headerPrefix: string }) => [s.headerName, s.headerPrefix];
