import assert from "node:assert/strict";
import { test } from "node:test";
import { loadGatewayConfig } from "./gateway-config.js";

const base = { BROKER_API_KEY: "b" };
const scopes = JSON.stringify([{ key_sha256: "0".repeat(64), tenant_id: "t", user_id: "u" }]);

test("MCP is off without scopes, and its defaults point at the all-in-one ports", () => {
  assert.equal(loadGatewayConfig(base).mcp, undefined);
  const mcp = loadGatewayConfig({
    ...base,
    GATEWAY_REQUIRE_API_KEY: "true",
    GATEWAY_API_KEYS: "k",
    GATEWAY_MCP_SCOPES: scopes,
  }).mcp;
  assert.deepEqual(mcp, {
    scopes: { json: scopes },
    memoryUrl: "http://127.0.0.1:8080",
    memoryApiKey: undefined,
    chatUrl: "http://127.0.0.1:8000/api/v1",
    chatApiKey: undefined,
    httpTimeoutMs: 30_000,
    httpMaxBytes: 1_048_576,
    oauth: undefined,
    allowedOrigins: [],
    publicOrigin: undefined,
  });
  const listed = loadGatewayConfig({
    ...base,
    GATEWAY_REQUIRE_API_KEY: "true",
    GATEWAY_API_KEYS: "k",
    GATEWAY_MCP_SCOPES: scopes,
    GATEWAY_PUBLIC_URL: "https://gateway.example.com/base/",
    MCP_ALLOWED_ORIGINS: "https://tools.example.com, https://chat.example.com",
  }).mcp;
  assert.deepEqual(listed?.allowedOrigins, [
    "https://tools.example.com",
    "https://chat.example.com",
  ]);
  assert.equal(listed?.publicOrigin, "https://gateway.example.com");
});

test("MCP OAuth needs the issuer's JWKS and the resource URL, or says which is missing", () => {
  const mcpEnv = {
    ...base,
    GATEWAY_REQUIRE_API_KEY: "true",
    GATEWAY_API_KEYS: "k",
    GATEWAY_MCP_SCOPES: scopes,
  };
  const issuer = { GATEWAY_MCP_OAUTH_ISSUER: "https://idp.example" };
  const jwks = { GATEWAY_MCP_OAUTH_JWKS_URL: "https://idp.example/jwks" };
  assert.throws(
    () => loadGatewayConfig({ ...mcpEnv, ...issuer }),
    /needs GATEWAY_MCP_OAUTH_JWKS_URL/,
  );
  assert.throws(
    () => loadGatewayConfig({ ...mcpEnv, ...jwks }),
    /JWKS_URL needs GATEWAY_MCP_OAUTH_ISSUER/,
  );
  assert.throws(
    () => loadGatewayConfig({ ...mcpEnv, ...issuer, ...jwks }),
    /needs GATEWAY_MCP_RESOURCE \(or GATEWAY_PUBLIC_URL\)/,
  );
  assert.deepEqual(
    loadGatewayConfig({ ...mcpEnv, ...issuer, ...jwks, GATEWAY_PUBLIC_URL: "https://gw.example/x" })
      .mcp?.oauth,
    {
      issuer: "https://idp.example",
      jwksUrl: "https://idp.example/jwks",
      resource: "https://gw.example/mcp",
    },
  );
  assert.throws(
    () => loadGatewayConfig({ ...mcpEnv, GATEWAY_MCP_OAUTH_ISSUER: "not a url" }),
    /GATEWAY_MCP_OAUTH_ISSUER/,
  );
});

test("an MCP scope needs inbound keys, and one source of scopes", () => {
  assert.throws(
    () => loadGatewayConfig({ ...base, GATEWAY_MCP_SCOPES: scopes }),
    /GATEWAY_MCP_SCOPES needs GATEWAY_REQUIRE_API_KEY=true/,
  );
  assert.throws(
    () =>
      loadGatewayConfig({
        ...base,
        GATEWAY_REQUIRE_API_KEY: "true",
        GATEWAY_API_KEYS: "k",
        GATEWAY_MCP_SCOPES: scopes,
        GATEWAY_MCP_SCOPES_FILE: "/etc/atrium/scopes.json",
      }),
    /not both/,
  );
  assert.throws(
    () => loadGatewayConfig({ ...base, MCP_HTTP_MAX_BYTES: "12" }),
    /MCP_HTTP_MAX_BYTES/,
  );
});
