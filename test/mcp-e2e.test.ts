import assert from "node:assert/strict";
import { request as httpRequest } from "node:http";
import { after, before, describe, test } from "node:test";
import { eventually, needsServer, serverAvailable } from "@atrium/kit/testing";
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as HttpTransportV2,
} from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult, JSONRPCMessage, Progress } from "@modelcontextprotocol/sdk/types.js";
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

/** Every message the client's transport receives from now on, in arrival order. */
function wireLog(client: Client): JSONRPCMessage[] {
  const transport = client.transport;
  assert.ok(transport);
  const log: JSONRPCMessage[] = [];
  const deliver = transport.onmessage;
  transport.onmessage = (message, extra) => {
    log.push(message);
    deliver?.(message, extra);
  };
  return log;
}

/** Calls a fresh connection through http_request; the User-Agent the broker audited for it. */
async function auditedAgent(client: Client): Promise<string> {
  const live = await stack.connect("ws-a");
  const ok = await client.callTool({
    name: "http_request",
    arguments: { connection_id: live, url: "/me" },
  });
  assert.notEqual(ok.isError, true, text(ok));
  const audit = await fetch(
    `${stack.broker.urls.rest}/audit?event_type=token.retrieved&resource_id=${live}`,
    { headers: { "x-api-key": stack.brokerKey } },
  );
  const { events } = (await audit.json()) as { events: { user_agent: string }[] };
  assert.equal(events.length, 1, "one token handed out, one audit event");
  return events[0].user_agent;
}

const toolNames = ["ask", "context", "forget", "http_request", "recall", "remember"];

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
      assert.deepEqual(tools.map((tool) => tool.name).sort(), toolNames);
      for (const tool of tools) {
        assert.ok((tool.description ?? "").length > 80, `${tool.name} explains itself`);
        assert.equal(tool.outputSchema?.type, "object", `${tool.name} declares its result`);
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
      const wire = wireLog(client);
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
      const expected = [
        "thinking: observe",
        "tool_start: search",
        "tool_result: search",
        "thinking: answer",
        `step_complete: answer to: summarize the week (${transport})`,
      ];
      // What the server sent, in arrival order at the client's transport: every event of the
      // step, numbered, before the result.
      const arrived = wire.filter(
        (m) => "method" in m && m.method === "notifications/progress",
      ) as unknown as { params: Progress }[];
      assert.deepEqual(
        arrived.map((m) => [m.params.progress, m.params.message]),
        expected.map((message, i) => [i + 1, message]),
      );
      assert.ok(wire.findLastIndex((m) => "method" in m) < wire.findIndex((m) => "result" in m));
      // The SDK client (1.32) dispatches notifications a microtask late but responses at once,
      // so progress read in the same chunk as the result misses onprogress
      // (modelcontextprotocol/typescript-sdk#2580): when the step runs fast, all of it can
      // (seen over stdio). What does reach it is in order; the wire above shows all was sent.
      assert.deepEqual(
        progress.map((p) => p.message),
        expected.slice(0, progress.length),
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

    test("remember a note, then context shows it in the recent window", async (t) => {
      if (!(await needsServer(t, "postgres"))) return;
      const client = await connect(stack.keys.alice);
      const note = `Alice prefers aisle seats (noted over ${transport})`;
      const stored = await client.callTool({ name: "remember", arguments: { note } });
      assert.deepEqual(structured(stored), { stored: true, kind: "note" });
      const window = await client.callTool({ name: "context", arguments: { limit: 50 } });
      const events = structured<{ recent_events: { content: string }[] }>(window).recent_events;
      assert.ok(
        events.some((e) => e.content === note),
        JSON.stringify(events),
      );
      const bobs = await (await connect(stack.keys.bob)).callTool({
        name: "context",
        arguments: { limit: 50 },
      });
      const bobEvents = structured<{ recent_events: { content: string }[] }>(bobs).recent_events;
      assert.ok(!bobEvents.some((e) => e.content === note), "bob never sees alice's window");
      const recalled = await client.callTool({
        name: "recall",
        arguments: { query: "aisle seats", limit: 5 },
      });
      assert.notEqual(recalled.isError, true, text(recalled));
      assert.ok(Array.isArray(structured<{ results: unknown[] }>(recalled).results));
    });

    test("http_request: the credential is injected, never shown, and stays on the provider's host", async (t) => {
      if (!(await needsServer(t, "postgres"))) return;
      const client = await connect(stack.keys.alice);
      const connectionId = await stack.connect("ws-a");
      const call = (args: Record<string, unknown>) =>
        client.callTool({
          name: "http_request",
          arguments: { connection_id: connectionId, ...args },
        });

      const me = await call({ url: "/me" });
      assert.notEqual(me.isError, true, text(me));
      const answer = structured<{ status: number; body: string; truncated: boolean }>(me);
      assert.equal(answer.status, 200);
      assert.deepEqual(JSON.parse(answer.body), { user: "alice@example.test", path: "/me" });
      assert.equal(stack.api.hits.at(-1)?.headers.authorization, `Bearer ${stack.providerKey}`);

      const echo = await call({ url: "/echo" });
      assert.ok(
        !JSON.stringify(echo).includes(stack.providerKey),
        "the token never reaches the model",
      );
      assert.match(structured<{ body: string }>(echo).body, /Bearer \[credential\]/);

      const hitsBefore = stack.elsewhere.hits.length;
      const offHost = await call({ url: `${stack.elsewhere.url}/steal` });
      assert.equal(offHost.isError, true);
      assert.match(text(offHost), /Refused: .*only be sent to http:\/\/127\.0\.0\.1/);
      const redirected = await call({ url: "/redirect-off" });
      assert.equal(redirected.isError, true);
      assert.match(text(redirected), /redirected to .*never sent off the provider's host/);
      assert.equal(stack.elsewhere.hits.length, hitsBefore, "no request reached the other host");

      const followed = await call({ url: "/redirect-on" });
      assert.equal(structured<{ status: number; url: string }>(followed).status, 200);
      assert.equal(structured<{ url: string }>(followed).url, `${stack.api.url}/me`);

      const big = await call({ url: "/big" });
      const cut = structured<{ body: string; truncated: boolean }>(big);
      assert.equal(cut.truncated, true);
      assert.equal(cut.body.length, 65536);

      const smuggled = await call({ url: "/me", headers: { Authorization: "Bearer mine" } });
      assert.equal(smuggled.isError, true);
      assert.match(text(smuggled), /header Authorization cannot be set/);
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
        last = (await stack.bus.history(String(context.workflow_id), String(context.step_id))).at(
          -1,
        );
        return last?.type === "step_complete";
      });
      assert.equal(last?.data.status, "failure");
      assert.match(String(last?.data.summary), /cancelled/);
    });
  });
}

describe("keys and scopes", () => {
  test("missing key 401, wrong key 403, a key without an MCP scope 403, as on /v1", async (t) => {
    if (!(await needsServer(t, "postgres"))) return;
    const initialize = (headers: Record<string, string>) =>
      fetch(`${stack.gatewayUrl}/mcp`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...headers,
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: "2025-06-18",
            capabilities: {},
            clientInfo: { name: "raw", version: "1" },
          },
        }),
      });
    assert.equal((await initialize({})).status, 401);
    assert.equal((await initialize({ "x-api-key": "not-a-key" })).status, 403);
    assert.equal((await initialize({ "x-api-key": stack.keys.unscoped })).status, 403);
    assert.equal((await initialize({ "x-api-key": stack.keys.alice })).status, 200);
    // The same key passes /v1: the 403 above is about the MCP scope only.
    const v1 = await fetch(`${stack.gatewayUrl}/v1/connections?workspace_id=ws-a`, {
      headers: { "x-api-key": stack.keys.unscoped },
    });
    assert.equal(v1.status, 200);
    await assert.rejects(httpClient("not-a-key"), (error: { code?: number }) => error.code === 403);
    // Through `atrium mcp` the gateway's refusal reaches the desktop client as the answer.
    await assert.rejects(stdioClient("not-a-key"), /Atrium gateway: .*X-API-Key is not valid/);
  });

  test("a foreign Origin is refused 403 whatever the key; no Origin and the gateway's own pass", async (t) => {
    if (!(await needsServer(t, "postgres"))) return;
    const { host, port } = new URL(stack.gatewayUrl);
    const initialize = (headers: Record<string, string>) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpRequest(
          `${stack.gatewayUrl}/mcp`,
          {
            method: "POST",
            headers: {
              "content-type": "application/json",
              accept: "application/json, text/event-stream",
              "x-api-key": stack.keys.alice,
              ...headers,
            },
          },
          (res) => {
            let body = "";
            res.setEncoding("utf8");
            res.on("data", (chunk) => {
              body += chunk;
            });
            res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
          },
        );
        req.on("error", reject);
        req.end(
          JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "initialize",
            params: {
              protocolVersion: "2025-11-25",
              capabilities: {},
              clientInfo: { name: "raw", version: "1" },
            },
          }),
        );
      });
    // DNS rebinding, as the MCP conformance suite sends it: the attacker's name in both.
    const rebound = await initialize({
      host: "evil.example.com",
      origin: "http://evil.example.com",
    });
    assert.equal(rebound.status, 403);
    assert.match(
      JSON.parse(rebound.body).error.message,
      /Origin http:\/\/evil\.example\.com is not allowed/,
    );
    assert.equal(
      (await initialize({ origin: `http://localhost:${Number(port) + 1}` })).status,
      403,
    );
    assert.equal((await initialize({})).status, 200, "no Origin: not a browser");
    assert.equal((await initialize({ origin: `http://${host}` })).status, 200, "own origin");
    assert.equal((await initialize({ origin: `http://localhost:${port}` })).status, 200);
  });

  test("recall: a key for alice finds her memories and never bob's", async (t) => {
    if (!(await needsServer(t, "postgres"))) return;
    const alice = await httpClient(stack.keys.alice);
    const bob = await httpClient(stack.keys.bob);
    const turns: [Client, string, string, Record<string, string>][] = [
      [
        alice,
        "I bought new hiking boots for the mountain trail in the Alps",
        "Break them in first.",
        { project: "outdoor" },
      ],
      [
        alice,
        "How do I file my quarterly tax return as a freelancer?",
        "Four estimates a year.",
        { project: "money" },
      ],
      [
        bob,
        "My sourdough bread starter smells like acetone",
        "Feed it more often.",
        { project: "kitchen" },
      ],
      [
        bob,
        "I need waterproof hiking boots for a trek in Patagonia",
        "Try a Gore-Tex pair.",
        { project: "outdoor" },
      ],
    ];
    for (const [client, user_message, agent_response, metadata] of turns) {
      const stored = await client.callTool({
        name: "remember",
        arguments: { user_message, agent_response, metadata },
      });
      assert.deepEqual(structured(stored), { stored: true, kind: "interaction" });
    }
    const recall = async (client: Client, args: Record<string, unknown>) =>
      structured<{ results: { content: string; similarity_score: number }[] }>(
        await client.callTool({ name: "recall", arguments: args }),
      ).results;
    await eventually("alice's boots are searchable", async () =>
      (await recall(alice, { query: "hiking boots" })).some((r) => /Alps/.test(r.content)),
    );
    await eventually("bob's boots are searchable", async () =>
      (await recall(bob, { query: "hiking boots" })).some((r) => /Patagonia/.test(r.content)),
    );
    for (const result of await recall(bob, { query: "hiking boots in the Alps", limit: 50 })) {
      assert.doesNotMatch(result.content, /Alps|tax/, "bob never sees alice's memory");
    }
    for (const result of await recall(alice, { query: "sourdough Patagonia", limit: 50 })) {
      assert.doesNotMatch(result.content, /sourdough|Patagonia/, "alice never sees bob's memory");
    }
    const taxes = { query: "quarterly tax return as a freelancer" };
    const money = await recall(alice, { ...taxes, filter: { project: "money" } });
    assert.ok(money.length > 0 && money.every((r) => /tax/.test(r.content)), JSON.stringify(money));
    const outdoor = await recall(alice, { ...taxes, filter: { project: "outdoor" } });
    assert.ok(
      outdoor.every((r) => !/tax/.test(r.content)),
      "the filter leaves the tax chain out",
    );
    // An argument cannot widen the scope: unknown fields are not a way in.
    const widened = await bob.callTool({
      name: "recall",
      arguments: { query: "hiking boots Alps", user_id: "alice", tenant_id: "acme" },
    });
    for (const result of structured<{ results: { content: string }[] }>(widened)?.results ?? []) {
      assert.doesNotMatch(result.content, /Alps/);
    }
    const pages = await alice.readResource({ uri: "atrium://memory/dialogue-pages" });
    const listed = JSON.parse((pages.contents[0] as { text: string }).text).pages as {
      summary: string;
    }[];
    assert.ok(listed.length > 0, "alice has dialogue pages");
    assert.ok(listed.every((page) => !/sourdough|Patagonia/.test(page.summary)));
  });

  test("http_request: another workspace's connection is unknown, revoked and attention states are explained, calls are audited with the client's name", async (t) => {
    if (!(await needsServer(t, "postgres"))) return;
    const alice = await httpClient(stack.keys.alice, "audit-probe");
    const bobsConnection = await stack.connect("ws-b");
    const foreign = await alice.callTool({
      name: "http_request",
      arguments: { connection_id: bobsConnection, url: "/me" },
    });
    assert.equal(foreign.isError, true);
    assert.match(text(foreign), /no connection .* in this key's workspace/);

    const revoked = await stack.connect("ws-a");
    await stack.sdk.revokeConnection(revoked, { workspaceId: "ws-a", reason: "e2e" });
    const afterRevoke = await alice.callTool({
      name: "http_request",
      arguments: { connection_id: revoked, url: "/me" },
    });
    assert.equal(afterRevoke.isError, true);
    assert.match(text(afterRevoke), /was revoked.*connect the account again/);

    const stale = await stack.connect("ws-a");
    await stack.markAttention(stale);
    const needsConsent = await alice.callTool({
      name: "http_request",
      arguments: { connection_id: stale, url: "/me" },
    });
    assert.equal(needsConsent.isError, true);
    assert.match(text(needsConsent), /needs attention.*ask the user to reconnect/);

    assert.match(await auditedAgent(alice), /^atrium-mcp\/\S+ \(audit-probe\/1\.0\.0\)$/);
  });

  test("stdio: the desktop client's name is what the audit records", async (t) => {
    if (!(await needsServer(t, "postgres"))) return;
    const desktop = await stdioClient(stack.keys.alice, "claude-desktop-e2e");
    assert.match(
      await auditedAgent(desktop),
      /^atrium-mcp\/\S+ \(claude-desktop-e2e\/2\.0\.0 atrium-mcp-stdio\/\S+\)$/,
    );
  });
});

test("two gateway instances serve one client alternately: no session state, no sticky routing", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const instances = [stack.gatewayUrl, stack.secondGatewayUrl];
  const served: string[] = [];
  let next = 0;
  const client = new Client({ name: "balanced", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${stack.gatewayUrl}/mcp`), {
      requestInit: { headers: { "x-api-key": stack.keys.alice } },
      // A round-robin load balancer in front of the two instances.
      fetch: (input, init) => {
        const target = new URL(String(input));
        const instance = new URL(instances[next++ % instances.length]);
        target.host = instance.host;
        served.push(target.host);
        return fetch(target, init);
      },
    }),
  );
  clients.push(client);
  const note = "Alice's desk is on the third floor (balanced client)";
  await client.callTool({ name: "remember", arguments: { note } });
  const window = await client.callTool({ name: "context", arguments: { limit: 50 } });
  assert.ok(
    structured<{ recent_events: { content: string }[] }>(window).recent_events.some(
      (e) => e.content === note,
    ),
  );
  const asked = await client.callTool({ name: "ask", arguments: { message: "balanced" } });
  assert.equal(structured<{ answer: string }>(asked).answer, "answer to: balanced");
  assert.equal(new Set(served).size, 2, `both instances answered: ${served.join(", ")}`);
});

describe("a second client implementation (@modelcontextprotocol/client 2.x)", () => {
  const connectV2 = async (key: string) => {
    const client = new ClientV2({ name: "e2e-client-v2", version: "2.3.1" });
    await client.connect(
      new HttpTransportV2(new URL(`${stack.gatewayUrl}/mcp`), {
        requestInit: { headers: { "x-api-key": key } },
      }),
    );
    v2Clients.push(client);
    return client;
  };
  const v2Clients: ClientV2[] = [];
  after(async () => {
    for (const client of v2Clients) await client.close().catch(() => {});
  });

  test("tools, memory, progress of ask, host restriction and key refusal", async (t) => {
    if (!(await needsServer(t, "postgres"))) return;
    await assert.rejects(connectV2("not-a-key"), /403|X-API-Key is not valid/);
    const client = await connectV2(stack.keys.bob);
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((tool) => tool.name).sort(), toolNames);

    const note = "Bob keeps his passport in the blue folder (v2 client)";
    const stored = await client.callTool({ name: "remember", arguments: { note } });
    assert.deepEqual(stored.structuredContent, { stored: true, kind: "note" });
    const window = await client.callTool({ name: "context", arguments: { limit: 50 } });
    const events = (window.structuredContent as { recent_events: { content: string }[] })
      .recent_events;
    assert.ok(events.some((e) => e.content === note));

    const progress: string[] = [];
    const asked = await client.callTool(
      { name: "ask", arguments: { message: "plan my trip" } },
      { onprogress: (p) => progress.push(String(p.message)) },
    );
    assert.equal((asked.structuredContent as { answer: string }).answer, "answer to: plan my trip");
    assert.deepEqual(progress, [
      "thinking: observe",
      "tool_start: search",
      "tool_result: search",
      "thinking: answer",
      "step_complete: answer to: plan my trip",
    ]);

    const connectionId = await stack.connect("ws-b");
    const offHost = await client.callTool({
      name: "http_request",
      arguments: { connection_id: connectionId, url: `${stack.elsewhere.url}/x` },
    });
    assert.equal(offHost.isError, true);
    assert.match(text(offHost), /Refused/);
    const me = await client.callTool({
      name: "http_request",
      arguments: { connection_id: connectionId, url: "/me" },
    });
    assert.equal((me.structuredContent as { status: number }).status, 200);
  });
});

// Last of the memory tests: it erases alice's memory with the desk agent, which those above read.
describe("forget", () => {
  test("forget the agent's scope: what was remembered is recalled no more", async (t) => {
    if (!(await needsServer(t, "postgres"))) return;
    const client = await Object.values(transports)[0](stack.keys.alice);
    const note = `Alice's locker code is quillfeather-mcp`;
    await client.callTool({ name: "remember", arguments: { note } });
    const search = async () =>
      JSON.stringify(
        structured(
          await client.callTool({
            name: "recall",
            arguments: { query: `quillfeather mcp` },
          }),
        ),
      );
    assert.match(await search(), /quillfeather/);
    const refused = await client.callTool({ name: "forget", arguments: {} });
    assert.equal(refused.isError, true);
    const forgotten = await client.callTool({ name: "forget", arguments: { scope: "agent" } });
    assert.notEqual(forgotten.isError, true, text(forgotten));
    const answer = structured<{ forgotten: boolean; events_erased: number }>(forgotten);
    assert.equal(answer.forgotten, true);
    assert.ok(answer.events_erased >= 1);
    assert.doesNotMatch(await search(), /quillfeather/);
    const window = await client.callTool({ name: "context", arguments: { limit: 50 } });
    assert.doesNotMatch(JSON.stringify(structured(window)), /quillfeather/);
  });
});

test("credentialed calls are logged with the client's name; no key, token or credential ever is", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const text = stack.logs.join("");
  assert.match(text, /"operation":"POST \/mcp"/, "the MCP requests were logged");
  const calls = stack.logs
    .map((line) => JSON.parse(line))
    .filter((line) => line.msg === "MCP credentialed call");
  assert.ok(
    calls.some(
      (c) => c.outcome === 200 && c.target === "/me" && /audit-probe\/1\.0\.0/.test(c.mcpClient),
    ),
    "a credentialed call is logged with the client's name",
  );
  assert.ok(calls.some((c) => c.outcome === "refused" && c.target.endsWith("/steal")));
  for (const secret of [stack.providerKey, stack.brokerKey, ...Object.values(stack.keys)]) {
    assert.ok(!text.includes(secret), "a secret reached the log");
  }
});
