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
  });
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
