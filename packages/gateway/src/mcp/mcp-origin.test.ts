import assert from "node:assert/strict";
import { test } from "node:test";
import { createMcpOriginCheck } from "./mcp-origin.js";

test("/mcp origins: none, the gateway's own and the listed pass; any other is foreign", () => {
  const allowed = createMcpOriginCheck({
    allowedOrigins: ["https://tools.example.com/"],
    publicOrigin: "https://gateway.example.com",
  });
  const port = 8082;
  for (const origin of [
    undefined,
    "https://gateway.example.com",
    "https://TOOLS.example.com",
    "http://localhost:8082",
    "http://127.0.0.1:8082",
    "http://[::1]:8082",
  ]) {
    assert.equal(allowed(origin, port), true, String(origin));
  }
  for (const origin of [
    "http://evil.example.com",
    "https://gateway.example.com.evil.io",
    "http://localhost:3000",
    "http://127.0.0.1",
    "null",
    "file://",
  ]) {
    assert.equal(allowed(origin, port), false, origin);
  }
  const any = createMcpOriginCheck({ allowedOrigins: ["*"], publicOrigin: undefined });
  assert.equal(any("http://evil.example.com", port), true);
});
