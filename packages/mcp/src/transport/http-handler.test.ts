import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import type { ChatClient, ChatResponse } from "@atrium/sdk";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { ToolContext } from "../tool-context.js";
import { createMcpHttpHandler } from "./http-handler.js";

/** A chat that answers only when told to, and records whether its call was aborted. */
const pending: { signal: AbortSignal; answer: (text: string) => void }[] = [];
const chat = {
  send: (request, options) =>
    new Promise<ChatResponse>((resolve, reject) => {
      const signal = options?.signal as AbortSignal;
      signal.addEventListener("abort", () => reject(signal.reason), { once: true });
      pending.push({
        signal,
        answer: (answer) =>
          resolve({
            workflow_id: request.workflow_id ?? "",
            step_id: "step_1",
            status: "success",
            answer,
            sources: [],
            tokens: {},
            elapsed_ms: 1,
          }),
      });
    }),
  stream: async function* () {},
  history: async () => [],
  start: () => Promise.reject(new Error("not used")),
  run: () => Promise.reject(new Error("not used")),
  resume: () => Promise.reject(new Error("not used")),
  resumeInBackground: () => Promise.reject(new Error("not used")),
  cancel: () => Promise.reject(new Error("not used")),
} satisfies ChatClient;

const context = {
  scope: { tenantId: "t", userId: "u", agentId: "a", workspaceId: "w" },
  chat,
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
    // The caller's key digest stands in for the key, as the gateway passes it.
    const callerKey = String(req.headers["x-caller"]);
    await handler.handle(req, res, JSON.parse(text), { callerKey, context });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`);
});

after(() => {
  server.closeAllConnections();
  server.close();
});

const connect = async (caller: string) => {
  const client = new Client({ name: caller, version: "1" });
  await client.connect(
    new StreamableHTTPClientTransport(url, { requestInit: { headers: { "x-caller": caller } } }),
  );
  return client;
};

const untilPending = async (count: number) => {
  while (pending.length < count) await new Promise((resolve) => setTimeout(resolve, 5));
};

test("a cancel in a later POST stops the call it names, and only for the same key", async () => {
  const alice = await connect("alice");
  const cancel = new AbortController();
  const call = alice.callTool({ name: "ask", arguments: { message: "slow" } }, undefined, {
    signal: cancel.signal,
  });
  await untilPending(1);
  // Mallory knows the JSON-RPC id (ids are small integers) but holds another key.
  const id = 1;
  const forged = await fetch(url, {
    method: "POST",
    headers: {
      "x-caller": "mallory",
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: id, reason: "forged" },
    }),
  });
  assert.equal(forged.status, 202);
  assert.equal(pending[0].signal.aborted, false, "another key cannot cancel alice's call");

  cancel.abort("alice changed her mind");
  await assert.rejects(call, /changed her mind/);
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(pending[0].signal.aborted, true, "alice's own cancel reached the running call");
  await alice.close();
});

test("calls that are not cancelled finish normally", async () => {
  const bob = await connect("bob");
  const call = bob.callTool({ name: "ask", arguments: { message: "quick" } });
  await untilPending(2);
  pending[1].answer("done");
  const result = await call;
  assert.equal((result.structuredContent as { answer: string }).answer, "done");
  await bob.close();
});

test("a call without a progress token is one JSON body; with one, an SSE stream", async () => {
  const call = (meta?: object) =>
    fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "x-caller": "carol",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/list",
        params: meta ? { _meta: meta } : {},
      }),
    });
  const plain = await call();
  assert.match(plain.headers.get("content-type") ?? "", /^application\/json/);
  assert.ok(((await plain.json()) as { result: { tools: unknown[] } }).result.tools.length > 0);
  const streamed = await call({ progressToken: "p1" });
  assert.match(streamed.headers.get("content-type") ?? "", /^text\/event-stream/);
  assert.match(await streamed.text(), /"tools"/);
});

test("a tools/call whose arguments are not an object is invalid params, naming the field", async () => {
  const res = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "x-caller": "carol",
    },
    body: JSON.stringify([
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "recall", arguments: "x" } },
      { jsonrpc: "2.0", id: 2, method: "tools/list" },
    ]),
  });
  const answers = (await res.json()) as { id: number; error: { code: number; message: string } }[];
  assert.deepEqual(
    answers.map((a) => [a.id, a.error.code]),
    [
      [1, -32602],
      [2, -32600],
    ],
  );
  assert.match(answers[0].error.message, /params\.arguments must be an object/);
});

test("reading a trace resource of another scope is resource-not-found, not an internal error", async () => {
  const client = await connect("dave");
  try {
    await assert.rejects(
      client.readResource({ uri: "atrium://traces/wf_other/step_1" }),
      (error: { code?: number }) => error.code === -32002,
    );
  } finally {
    await client.close();
  }
});

test("the Streamable HTTP rules of a POST: statuses and JSON-RPC errors as the SDK's transport gives them", async () => {
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "x-caller": "erin",
        ...headers,
      },
      body: JSON.stringify(body),
    });
  const list = { jsonrpc: "2.0", id: 1, method: "tools/list" };
  const refused = async (res: Response) => {
    const body = (await res.json()) as { id: null; error: { code: number; message: string } };
    assert.equal(body.id, null);
    return [res.status, body.error.code, body.error.message];
  };
  const [status, code, message] = await refused(await post(list, { accept: "application/json" }));
  assert.deepEqual([status, code], [406, -32000]);
  assert.match(String(message), /accept both application\/json and text\/event-stream/);
  assert.deepEqual(
    (await refused(await post(list, { "content-type": "text/plain" }))).slice(0, 2),
    [415, -32000],
  );
  const version = await refused(await post(list, { "mcp-protocol-version": "1999-01-01" }));
  assert.deepEqual(version.slice(0, 2), [400, -32000]);
  assert.match(String(version[2]), /Unsupported protocol version: 1999-01-01/);
  assert.deepEqual(
    (await refused(await post(Array.from({ length: 101 }, (_, i) => ({ ...list, id: i }))))).slice(
      0,
      2,
    ),
    [400, -32600],
  );
  assert.deepEqual((await refused(await post({ hello: "world" }))).slice(0, 2), [400, -32700]);
  const initialize = {
    jsonrpc: "2.0",
    method: "initialize",
    params: {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "raw", version: "1" },
    },
  };
  assert.deepEqual(
    (
      await refused(
        await post([
          { ...initialize, id: 1 },
          { ...list, id: 2 },
        ]),
      )
    ).slice(0, 2),
    [400, -32600],
  );

  const notified = await post({ jsonrpc: "2.0", method: "notifications/initialized" });
  assert.equal(notified.status, 202);
  assert.equal(await notified.text(), "");
  const notifiedWithToken = await post({
    jsonrpc: "2.0",
    method: "notifications/initialized",
    params: { _meta: { progressToken: "p" } },
  });
  assert.equal(notifiedWithToken.status, 202, "a notification opens no stream");
  const batch = await post([
    { ...list, id: "a" },
    { jsonrpc: "2.0", id: "b", method: "ping" },
  ]);
  assert.equal(batch.status, 200);
  const answers = (await batch.json()) as { id: string; result: object }[];
  assert.deepEqual(
    answers.map((answer) => answer.id),
    ["a", "b"],
  );
  assert.ok((answers[0].result as { tools: unknown[] }).tools.length > 0);
});
