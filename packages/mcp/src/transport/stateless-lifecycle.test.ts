import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { ToolContext } from "../tool-context.js";
import { createMcpHttpHandler } from "./http-handler.js";

const context = {
  scope: { tenantId: "t", userId: "u", agentId: "a", workspaceId: "w" },
  limits: { timeoutMs: 1000, maxResponseBytes: 1024, maxRedirects: 0 },
  recordCall: () => {},
  onError: () => {},
} as unknown as Omit<ToolContext, "cancelled">;

let server: Server;
let url: URL;

before(async () => {
  const handler = createMcpHttpHandler();
  server = createServer(async (req, res) => {
    // As on the gateway: stateless, POST only.
    if (req.method !== "POST") return res.writeHead(405, { allow: "POST" }).end();
    let text = "";
    for await (const chunk of req) text += chunk;
    await handler.handle(req, res, JSON.parse(text), { callerKey: "k", context });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`);
});

after(() => {
  server.closeAllConnections();
  server.close();
});

const version = "2026-07-28";
const meta = {
  "io.modelcontextprotocol/protocolVersion": version,
  "io.modelcontextprotocol/clientCapabilities": {},
};

/** One 2026-07-28 request, with the headers that revision asks for unless told otherwise. */
async function call(
  method: string,
  params: Record<string, unknown> = {},
  headers: Record<string, string> = {},
) {
  const res = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": version,
      "mcp-method": method,
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 7, method, params: { _meta: meta, ...params } }),
  });
  const body = (await res.json()) as {
    id: unknown;
    result?: Record<string, unknown>;
    error?: { code: number; message: string; data?: unknown };
  };
  return { status: res.status, ...body };
}

test("server/discover answers what initialize would, with the versions and cache hints", async () => {
  const { status, result } = await call("server/discover");
  assert.equal(status, 200);
  assert.deepEqual(result?.supportedVersions, [
    "2026-07-28",
    "2025-11-25",
    "2025-06-18",
    "2025-03-26",
    "2024-11-05",
    "2024-10-07",
  ]);
  assert.deepEqual(result?.capabilities, {
    tools: { listChanged: false },
    resources: { listChanged: false },
    logging: {},
    extensions: { "io.modelcontextprotocol/tasks": {} },
  });
  assert.deepEqual(
    (result?._meta as Record<string, { name: string }>)?.["io.modelcontextprotocol/serverInfo"]
      ?.name,
    "atrium",
  );
  assert.equal(result?.resultType, "complete");
  assert.equal(result?.cacheScope, "public");
});

test("2026-07-28 results say they are complete; lists carry cache hints", async () => {
  const tools = await call("tools/list");
  assert.equal(tools.status, 200);
  assert.ok(((tools.result?.tools ?? []) as unknown[]).length > 0);
  assert.equal(tools.result?.resultType, "complete");
  assert.equal(tools.result?.ttlMs, 300_000);
  const call2 = await call(
    "tools/call",
    { name: "recall", arguments: {} },
    { "mcp-name": "  recall  " },
  );
  assert.equal(call2.status, 200);
  assert.equal(call2.result?.resultType, "complete");
  assert.equal(call2.result?.ttlMs, undefined, "a tool call is not cacheable");
  const uri = "atrium://nothing/here";
  const missing = await call("resources/read", { uri }, { "mcp-name": uri });
  assert.deepEqual([missing.status, missing.error?.code], [200, -32602]);
  assert.deepEqual(missing.error?.data, { uri }, "the missing resource is named (SEP-2164)");
});

test("2026-07-28 refusals: status, code and the request's id", async () => {
  const unsupported = await call(
    "server/discover",
    {
      _meta: { ...meta, "io.modelcontextprotocol/protocolVersion": "2099-01-01" },
    },
    { "mcp-protocol-version": "2099-01-01" },
  );
  assert.deepEqual([unsupported.status, unsupported.error?.code, unsupported.id], [400, -32022, 7]);
  assert.deepEqual(unsupported.error?.data, {
    supported: ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "2024-10-07"],
    requested: "2099-01-01",
  });
  for (const removed of ["initialize", "ping", "logging/setLevel", "resources/subscribe"]) {
    const answer = await call(removed);
    assert.deepEqual([answer.status, answer.error?.code, answer.id], [404, -32601, 7], removed);
  }
  const unknown = await call("subscriptions/listen");
  assert.deepEqual([unknown.status, unknown.error?.code], [404, -32601]);
  const wrongMethod = await call("tools/list", {}, { "mcp-method": "prompts/list" });
  assert.deepEqual([wrongMethod.status, wrongMethod.error?.code], [400, -32020]);
  const noName = await call("tools/call", { name: "recall", arguments: {} });
  assert.deepEqual([noName.status, noName.error?.code], [400, -32020]);
  assert.match(String(noName.error?.message), /Mcp-Name/);
  const noMeta = await call("tools/list", {
    _meta: { "io.modelcontextprotocol/protocolVersion": version },
  });
  assert.deepEqual([noMeta.status, noMeta.error?.code, noMeta.id], [400, -32602, 7]);
  assert.match(String(noMeta.error?.message), /clientCapabilities/);
  const mismatch = await call("tools/list", {
    _meta: { ...meta, "io.modelcontextprotocol/protocolVersion": "2025-11-25" },
  });
  assert.deepEqual([mismatch.status, mismatch.error?.code], [400, -32020]);
});

test("a 2025-11-25 client still initializes, and is told the lists do not change", async () => {
  const client = new Client({ name: "older", version: "1" });
  await client.connect(new StreamableHTTPClientTransport(url));
  try {
    assert.deepEqual(client.getServerCapabilities()?.tools, { listChanged: false });
    const { tools } = await client.listTools();
    assert.ok(tools.some((tool) => tool.name === "recall"));
  } finally {
    await client.close();
  }
});
