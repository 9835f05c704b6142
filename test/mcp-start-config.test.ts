import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { eventually } from "@atrium/kit/testing";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { freePortOffset, spawnAtriumStart } from "./atrium-start-env.js";

// The newcomer's path to MCP: `atrium start`, paste the configuration its banner prints, start the
// client. The clients below are the official SDK's, configured with exactly what was printed (the
// stdio server is bin/atrium.js, so this needs `make build`, as a user's clone does).
const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..");

interface ServerConfig {
  mcpServers: {
    atrium: {
      command?: string;
      args?: string[];
      env?: Record<string, string>;
      type?: string;
      url?: string;
      headers?: Record<string, string>;
    };
  };
}

/** The JSON block printed after `heading`, up to the next line that is not indented JSON. */
function printedJson(output: string, heading: string): ServerConfig {
  const lines = output.split("\n");
  const start = lines.findIndex((line) => line.endsWith(heading)) + 1;
  assert.ok(start > 0, `no "${heading}" in:\n${output}`);
  const end = lines.findIndex((line, i) => i >= start && line.startsWith("    }"));
  return JSON.parse(lines.slice(start, end + 1).join("\n"));
}

const structured = (result: unknown) =>
  (result as { structuredContent: unknown }).structuredContent;

async function recalls(client: Client, text: string): Promise<boolean> {
  const found = structured(
    await client.callTool({ name: "recall", arguments: { query: text, limit: 5 } }),
  ) as { results: { content: string }[] };
  return found.results.some((result) => result.content.includes(text));
}

test("the MCP configuration atrium start prints works as pasted, over stdio and Streamable HTTP", async (t) => {
  const offset = await freePortOffset(0, 1);
  const dataDir = await mkdtemp(join(tmpdir(), "atrium-mcp-start-"));
  t.after(() => rm(dataDir, { recursive: true, force: true }));
  const atrium = await spawnAtriumStart({
    ATRIUM_DATA_DIR: dataDir,
    ATRIUM_PORT_OFFSET: String(offset),
    LOG_LEVEL: "warn",
  });
  t.after(() => atrium.stop());
  const output = atrium.output();
  const gateway = `http://127.0.0.1:${8082 + offset}`;
  assert.match(output, new RegExp(`console {7}${gateway}/console/`));
  assert.match(output, new RegExp(`MCP {11}${gateway}/mcp \\(X-API-Key: gw_dev_`));

  const stdio = printedJson(output, "stdio:").mcpServers.atrium;
  assert.equal(stdio.command, "node");
  assert.equal(stdio.args?.[0], join(repoRoot, "packages/server/bin/atrium.js"));
  const http = printedJson(output, "or Streamable HTTP:").mcpServers.atrium;
  assert.equal(http.type, "http");
  assert.equal(http.url, `${gateway}/mcp`);

  // The gateway requires the printed key, so webhook subscriptions (the console's Webhooks
  // page) are managed there instead of answering 412; without a key it is 401.
  const webhooks = await fetch(`${gateway}/v1/webhooks`, { headers: http.headers });
  assert.equal(webhooks.status, 200, await webhooks.clone().text());
  assert.equal((await fetch(`${gateway}/v1/webhooks`)).status, 401);

  const desktop = new Client({ name: "claude-ai", version: "0.1.0" });
  // As a desktop client starts it: the printed command, arguments and environment, elsewhere.
  await desktop.connect(
    new StdioClientTransport({
      command: stdio.command!,
      args: stdio.args,
      env: stdio.env,
      cwd: tmpdir(),
      stderr: "pipe",
    }),
  );
  t.after(() => desktop.close());
  const cursor = new Client({ name: "cursor", version: "1.0.0" });
  await cursor.connect(
    new StreamableHTTPClientTransport(new URL(http.url!), {
      requestInit: { headers: http.headers },
    }),
  );
  t.after(() => cursor.close());

  const overStdio = "I parked the car on level 3 of the Lisbon airport garage";
  const overHttp = "My dentist appointment moved to Thursday at 9";
  assert.deepEqual(
    structured(await desktop.callTool({ name: "remember", arguments: { note: overStdio } })),
    { stored: true, kind: "note" },
  );
  assert.deepEqual(
    structured(await cursor.callTool({ name: "remember", arguments: { note: overHttp } })),
    { stored: true, kind: "note" },
  );
  // Each transport recalls what the other stored: one scope, one memory.
  await eventually("HTTP recalls the stdio note", () => recalls(cursor, overStdio));
  await eventually("stdio recalls the HTTP note", () => recalls(desktop, overHttp));
});

test("npx atrium mcp beside atrium start needs no key: it reads dev.env and the moved port", async (t) => {
  const offset = await freePortOffset(0, 1);
  const dataDir = await mkdtemp(join(tmpdir(), "atrium-mcp-devenv-"));
  t.after(() => rm(dataDir, { recursive: true, force: true }));
  const atrium = await spawnAtriumStart({
    ATRIUM_DATA_DIR: dataDir,
    ATRIUM_PORT_OFFSET: String(offset),
    LOG_LEVEL: "warn",
  });
  t.after(() => atrium.stop());
  const client = new Client({ name: "shell", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({
      command: "npx",
      args: ["--no-install", "atrium", "mcp"],
      cwd: repoRoot,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? "",
        ATRIUM_DATA_DIR: dataDir,
        ATRIUM_PORT_OFFSET: String(offset),
      },
      stderr: "pipe",
    }),
  );
  t.after(() => client.close());
  const { tools } = await client.listTools();
  assert.ok(tools.some((tool) => tool.name === "recall"));
});
