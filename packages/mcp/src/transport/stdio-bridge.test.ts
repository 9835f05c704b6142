import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { PassThrough } from "node:stream";
import { test } from "node:test";
import { startStdioBridge } from "./stdio-bridge.js";

test("a refused request is answered on stdio, and the relay ends with stdin", async (t) => {
  const seen: { key?: string; agent?: string }[] = [];
  const gateway = createServer((req, res) => {
    seen.push({ key: req.headers["x-api-key"] as string, agent: req.headers["user-agent"] });
    res.writeHead(403, { "content-type": "application/json" });
    res.end('{"code":"PermissionDenied","message":"X-API-Key is not valid"}');
  });
  await new Promise<void>((resolve) => gateway.listen(0, "127.0.0.1", resolve));
  t.after(() => gateway.close());
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const bridge = await startStdioBridge({
    url: new URL(`http://127.0.0.1:${(gateway.address() as AddressInfo).port}/mcp`),
    apiKey: "desk-key",
    stdin,
    stdout,
  });
  const answered = new Promise<string>((resolve) => stdout.once("data", (d) => resolve(String(d))));
  stdin.write(
    `${JSON.stringify({
      jsonrpc: "2.0",
      id: 7,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "probe-desktop", version: "3.1" },
      },
    })}\n`,
  );
  const answer = JSON.parse(await answered);
  assert.equal(answer.id, 7);
  assert.match(answer.error.message, /Atrium gateway: .*X-API-Key is not valid/);
  assert.equal(seen[0].key, "desk-key");
  assert.match(seen[0].agent ?? "", /^probe-desktop\/3\.1 atrium-mcp-stdio\//);
  stdin.end();
  await bridge.closed;
});

test("a 2026-07-28 request gets its routing headers, and a refusal's JSON-RPC error comes back as is", async (t) => {
  const seen: Record<string, string | undefined>[] = [];
  const gateway = createServer((req, res) => {
    seen.push({
      version: req.headers["mcp-protocol-version"] as string | undefined,
      method: req.headers["mcp-method"] as string | undefined,
      name: req.headers["mcp-name"] as string | undefined,
    });
    res.writeHead(404, { "content-type": "application/json" });
    res.end('{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Method not found: x"}}');
  });
  await new Promise<void>((resolve) => gateway.listen(0, "127.0.0.1", resolve));
  t.after(() => gateway.close());
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const bridge = await startStdioBridge({
    url: new URL(`http://127.0.0.1:${(gateway.address() as AddressInfo).port}/mcp`),
    apiKey: "desk-key",
    stdin,
    stdout,
  });
  const answered = new Promise<string>((resolve) => stdout.once("data", (d) => resolve(String(d))));
  stdin.write(
    `${JSON.stringify({
      jsonrpc: "2.0",
      id: 3,
      method: "tools/call",
      params: {
        name: "récall",
        arguments: {},
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {},
        },
      },
    })}\n`,
  );
  const answer = JSON.parse(await answered);
  assert.deepEqual(answer, {
    jsonrpc: "2.0",
    id: 3,
    error: { code: -32601, message: "Method not found: x" },
  });
  assert.deepEqual(seen[0], {
    version: "2026-07-28",
    method: "tools/call",
    name: `=?base64?${Buffer.from("récall").toString("base64")}?=`,
  });
  stdin.end();
  await bridge.closed;
});
