import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { eventually, needsServer, serverAvailable } from "@atrium/kit/testing";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult, Progress } from "@modelcontextprotocol/sdk/types.js";
import { type McpStack, startMcpStack } from "./mcp-e2e-harness.js";

/**
 * The MCP server driven only through the official SDK's Client, over Streamable HTTP at the
 * gateway's /mcp and over stdio through `atrium mcp`, against real services.
 */
let stack: McpStack;
const clients: Client[] = [];

before(async () => {
  // The broker needs PostgreSQL (the tests below skip without it, and fail in CI).
  if (!(await serverAvailable("postgres"))) return;
  stack = await startMcpStack();
});

after(async () => {
  for (const client of clients) await client.close().catch(() => {});
  await stack?.stop();
});

async function httpClient(key: string, name = "e2e-http-client"): Promise<Client> {
  const client = new Client({ name, version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${stack.gatewayUrl}/mcp`), {
      requestInit: { headers: { "x-api-key": key, "user-agent": `${name}/1.0.0` } },
    }),
  );
  clients.push(client);
  return client;
}

async function stdioClient(key: string, name = "e2e-desktop"): Promise<Client> {
  const client = new Client({ name, version: "2.0.0" });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: ["--conditions=atrium-source", "--import", "tsx", "packages/server/src/main.ts", "mcp"],
      env: {
        PATH: process.env.PATH ?? "",
        ATRIUM_API_KEY: key,
        ATRIUM_GATEWAY_URL: stack.gatewayUrl,
      },
      stderr: "pipe",
    }),
  );
  clients.push(client);
  return client;
}

const text = (result: unknown) =>
  ((result as CallToolResult).content[0] as { type: "text"; text: string }).text;
const structured = <T>(result: unknown) => (result as CallToolResult).structuredContent as T;

const connected = new Map<string, Promise<Client>>();
/** One client per transport and key: a stdio client is a process, started once. */
const reuse = (transport: string, key: string, open: () => Promise<Client>) => {
  const id = `${transport}:${key}`;
  if (!connected.has(id)) connected.set(id, open());
  return connected.get(id) as Promise<Client>;
};
const transports = {
  "streamable HTTP": (key: string) => reuse("http", key, () => httpClient(key)),
  stdio: (key: string) => reuse("stdio", key, () => stdioClient(key)),
};

for (const [transport, connect] of Object.entries(transports)) {
  describe(`over ${transport}`, () => {
    test("lists the tools; no schema lets a caller name a tenant or user", async (t) => {
      if (!(await needsServer(t, "postgres"))) return;
      const client = await connect(stack.keys.alice);
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((tool) => tool.name).sort(), [
        "ask",
        "context",
        "http_request",
        "recall",
        "remember",
      ]);
      for (const tool of tools) {
        assert.ok((tool.description ?? "").length > 80, `${tool.name} explains itself`);
        const fields = Object.keys(tool.inputSchema.properties ?? {});
        for (const field of fields) assert.doesNotMatch(field, /tenant|user_id|workspace|agent_id/);
      }
      const { resources } = await client.listResources();
      assert.deepEqual(
        resources.map((r) => r.uri),
        ["atrium://memory/dialogue-pages"],
      );
      const { resourceTemplates } = await client.listResourceTemplates();
      assert.deepEqual(
        resourceTemplates.map((r) => r.uriTemplate),
        ["atrium://traces/{workflow_id}/{step_id}"],
      );
    });

    test("bad arguments get a tool error naming the field", async (t) => {
      if (!(await needsServer(t, "postgres"))) return;
      const client = await connect(stack.keys.alice);
      const result = await client.callTool({ name: "recall", arguments: { query: "" } });
      assert.equal(result.isError, true);
      assert.match(text(result), /query/);
      const limit = await client.callTool({
        name: "recall",
        arguments: { query: "x", limit: "ten" },
      });
      assert.equal(limit.isError, true);
      assert.match(text(limit), /limit/);
      const neither = await client.callTool({ name: "remember", arguments: {} });
      assert.equal(neither.isError, true);
      assert.match(text(neither), /user_message or note/);
    });

    test("ask: trace events arrive as progress notifications in order, in the key's scope", async (t) => {
      if (!(await needsServer(t, "postgres"))) return;
      const client = await connect(stack.keys.alice);
      const progress: Progress[] = [];
      const result = await client.callTool(
        { name: "ask", arguments: { message: `summarize the week (${transport})` } },
        undefined,
        { onprogress: (p) => progress.push(p) },
      );
      assert.notEqual(result.isError, true, text(result));
      const answer = structured<{
        answer: string;
        status: string;
        workflow_id: string;
        step_id: string;
        trace: string;
      }>(result);
      assert.equal(answer.answer, `answer to: summarize the week (${transport})`);
      assert.equal(answer.status, "success");
      assert.deepEqual(
        progress.map((p) => p.message),
        [
          "thinking: observe",
          "tool_start: search",
          "tool_result: search",
          "thinking: answer",
          `step_complete: answer to: summarize the week (${transport})`,
        ],
      );
      assert.deepEqual(
        progress.map((p) => p.progress),
        [1, 2, 3, 4, 5],
      );
      const call = stack.kernelCalls.at(-1);
      assert.equal(call?.agentId, "desk");
      assert.equal(call?.context.tenant_id, "acme");
      assert.equal(call?.context.user_id, "alice");

      const trace = await client.readResource({ uri: answer.trace });
      const events = JSON.parse((trace.contents[0] as { text: string }).text).events as {
        type: string;
      }[];
      assert.deepEqual(
        events.map((e) => e.type),
        ["thinking", "tool_start", "tool_result", "thinking", "step_complete"],
      );
      // Bob's key cannot read a trace of Alice's scope, even knowing its URI.
      const bob = await connect(stack.keys.bob);
      await assert.rejects(bob.readResource({ uri: answer.trace }), /No trace of workflow/);
    });

    test("ask: cancelling stops waiting, stops the kernel and the trace records it", async (t) => {
      if (!(await needsServer(t, "postgres"))) return;
      const client = await connect(stack.keys.alice);
      const cancel = new AbortController();
      const seen: Progress[] = [];
      const started = stack.kernelCalls.length;
      const call = client.callTool(
        { name: "ask", arguments: { message: "wait for me" } },
        undefined,
        {
          signal: cancel.signal,
          onprogress: (p) => {
            seen.push(p);
            if (seen.length === 3) cancel.abort("user pressed stop");
          },
        },
      );
      await assert.rejects(call, /user pressed stop|cancel|abort/i);
      await eventually("the kernel saw the cancellation", () => {
        const run = stack.kernelCalls[started];
        return run?.aborted === true;
      });
      const { context } = stack.kernelCalls[started];
      let last: { type: string; data: Record<string, unknown> } | undefined;
      await eventually("the step's trace ends", async () => {
        last = (await stack.bus.history(String(context.workflow_id), String(context.step_id))).at(-1);
        return last?.type === "step_complete";
      });
      assert.equal(last?.data.status, "failure");
      assert.match(String(last?.data.summary), /cancelled/);
    });
  });
}
