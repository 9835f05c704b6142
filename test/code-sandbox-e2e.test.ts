import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { startAgentService } from "@atrium/chat";
import { createLogger, type RunningService } from "@atrium/kit";
import { needsServer } from "@atrium/kit/testing";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { startMcpStack } from "./mcp-e2e-harness.js";

/**
 * The escape attempts that reached the host's process through the coder's old sandbox, sent the
 * way an attacker sends them: a code block in a chat message (the coder runs it without an LLM),
 * through POST /chat and through MCP's ask. A canary in the host's data directory stands for
 * data/dev.env under `make start`.
 */
let agent: RunningService;
let dataDir = "";
let canary = "";
/** Where the fetch attempt would land; it must never be called. */
const listener = { port: 0, requests: 0, server: createServer() };

before(async () => {
  listener.server.on("request", (_req, res) => {
    listener.requests++;
    res.end("reached");
  });
  await new Promise<void>((resolve) => listener.server.listen(0, "127.0.0.1", resolve));
  listener.port = (listener.server.address() as AddressInfo).port;
  dataDir = await mkdtemp(join(tmpdir(), "coder-e2e-"));
  canary = `canary-${randomBytes(8).toString("hex")}`;
  await writeFile(join(dataDir, "dev.env"), `ATRIUM_API_KEY=${canary}\n`);
  agent = await startAgentService({
    env: {
      AGENT_PORT: "0",
      AGENT_HOST: "127.0.0.1",
      ATRIUM_DATA_DIR: dataDir,
      TRACES_DIR: join(dataDir, "traces"),
    },
    logger: createLogger({ name: "agent", level: "silent" }),
  });
});
after(async () => {
  listener.server.close();
  await agent?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

const readFile = (path: string) =>
  `.getBuiltinModule("fs").readFileSync(${JSON.stringify(path)}, "utf8")`;
const attempts = (path: string): Record<string, string> => ({
  "this.constructor.constructor": `this.constructor.constructor("return process")()${readFile(path)}`,
  "globalThis.constructor.constructor": `globalThis.constructor.constructor("return process")()${readFile(path)}`,
  "console.log.constructor": `console.log.constructor("return process")()${readFile(path)}`,
  "process.getBuiltinModule": `process${readFile(path)}`,
  // The URL is put together in the code: one in the message would send the turn to the researcher.
  fetch: `this.constructor.constructor("return fetch")()("ht" + "tp://127.0.0.1:" + ${listener.port})`,
});
const message = (code: string) => `Run this:\n\`\`\`js\nconsole.log(${code})\n\`\`\``;

test("POST /chat with context.role coder: no escape attempt reaches the host", async () => {
  const ok = await fetch(`${agent.urls.rest}/api/v1/chat`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ message: message("2 ** 10"), context: { role: "coder" } }),
  });
  assert.equal(ok.status, 200);
  assert.equal(((await ok.json()) as { answer: string }).answer, "1024");

  for (const [name, code] of Object.entries(attempts(join(dataDir, "dev.env")))) {
    const res = await fetch(`${agent.urls.rest}/api/v1/chat`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ message: message(code), context: { role: "coder" } }),
    });
    assert.equal(res.status, 200, name);
    const body = (await res.json()) as { status: string; answer: string };
    assert.equal(body.status, "failure", `${name}: ${body.answer}`);
    assert.match(body.answer, /The code failed: ReferenceError/, name);
    assert.ok(!JSON.stringify(body).includes(canary), `${name} read the data directory`);
  }
  assert.equal(listener.requests, 0, "the sandbox made no request");
});

test("MCP ask: no escape attempt reaches the host", async (t) => {
  // The MCP stack's broker needs PostgreSQL.
  if (!(await needsServer(t, "postgres"))) return;
  const stack = await startMcpStack({ chatUrl: `${agent.urls.rest}/api/v1`, logLevel: "info" });
  t.after(() => stack.stop());
  const client = new Client({ name: "coder-e2e", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${stack.gatewayUrl}/mcp`), {
      requestInit: { headers: { "x-api-key": stack.keys.alice } },
    }),
  );
  t.after(() => client.close());
  for (const [name, code] of Object.entries(attempts(join(dataDir, "dev.env")))) {
    const result = (await client.callTool({
      name: "ask",
      arguments: { message: message(code) },
    })) as CallToolResult;
    const answer = result.structuredContent as { status: string; answer: string };
    assert.equal(answer.status, "failure", `${name}: ${answer.answer}`);
    assert.match(answer.answer, /The code failed: ReferenceError/, name);
    assert.ok(!JSON.stringify(result).includes(canary), `${name} read the data directory`);
  }
  assert.equal(listener.requests, 0, "the sandbox made no request");
});
