import assert from "node:assert/strict";
import { mkdir } from "node:fs/promises";
import { request } from "node:http";
import { join } from "node:path";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { createMemoryCache } from "@atrium/kit";
import { EventSource } from "eventsource";
import type { KernelInput } from "../kernel/kernel-types.js";
import { startTestChatApp } from "../testing/chat-app.js";
import { readSse } from "../testing/sse-client.js";
import type { TraceEvent } from "../trace/trace-event.js";
import { assertFrameworkAvailable } from "./framework.js";
import { shutdownMessage } from "./trace-stream.js";

const post = (base: string, body: unknown, path = "/api/v1/chat") =>
  fetch(`${base}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });

async function echoKernel(input: KernelInput) {
  await input.trace.emit("thinking", { thought: "hmm" });
  await input.trace.emit("tool_start", { tool: "echo", arguments: { text: input.task } });
  await input.trace.emit("tool_result", { tool: "echo", ok: true, result: input.task });
  return {
    status: "success" as const,
    payload: { echoed: input.task, seen: input },
    metadata: {
      tokens: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
      sources: Array.from({ length: 12 }, (_, i) => ({
        title: `t${i}`,
        url: `https://example.org/${i}`,
        source: "web",
        extra: 1,
      })),
    },
  };
}

test("POST /chat validates the body and names the field", async (t) => {
  const chat = await startTestChatApp(createMemoryCache(), echoKernel);
  t.after(() => chat.close());
  for (const [body, field] of [
    [{}, /message is required/],
    [{ message: 42 }, /message must be a string/],
    [{ message: "x", workflow_id: "../etc" }, /workflow_id/],
    [{ message: "x", context: [1] }, /context/],
    [{ message: "x", agent_id: 5 }, /agent_id/],
  ] as const) {
    const res = await post(chat.base, body);
    assert.equal(res.status, 400);
    assert.match(((await res.json()) as { error: string }).error, field);
  }
});

test("malformed bodies answer in the chat API's {error} shape", async (t) => {
  const chat = await startTestChatApp(createMemoryCache(), echoKernel);
  t.after(() => chat.close());
  const broken = await fetch(`${chat.base}/api/v1/chat`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: '{"message": ',
  });
  assert.equal(broken.status, 400);
  assert.equal(typeof ((await broken.json()) as { error: unknown }).error, "string");
  const xml = await fetch(`${chat.base}/api/v1/chat`, {
    method: "POST",
    headers: { "content-type": "application/xml" },
    body: "<message>hello</message>",
  });
  assert.equal(xml.status, 415);
  assert.deepEqual(Object.keys((await xml.json()) as object), ["error"]);
  const text = await fetch(`${chat.base}/api/v1/chat`, {
    method: "POST",
    headers: { "content-type": "text/plain" },
    body: "hello",
  });
  assert.equal(text.status, 400);
  assert.match(
    ((await text.json()) as { error: string }).error,
    /JSON object with a string field 'message'/,
  );
});

test("POST /chat fills defaults and shapes the response", async (t) => {
  let seen: KernelInput | undefined;
  const chat = await startTestChatApp(createMemoryCache(), async (input) => {
    seen = input;
    return echoKernel(input);
  });
  t.after(() => chat.close());
  const res = await post(chat.base, { message: "hello", context: { user_id: "u1" } });
  assert.equal(res.status, 200);
  const body = (await res.json()) as Record<string, unknown> & { sources: unknown[] };
  assert.match(body.workflow_id as string, /^chat_[0-9a-f]{12}$/);
  assert.match(body.step_id as string, /^step_\d{10}$/);
  assert.equal(body.status, "success");
  assert.equal(typeof body.answer, "string");
  assert.ok((body.answer as string).length <= 2000, "payload fallback is cut to 2,000 characters");
  assert.ok((body.answer as string).startsWith('{"echoed":"hello"'));
  assert.equal(body.sources.length, 10);
  assert.deepEqual(body.sources[0], { title: "t0", url: "https://example.org/0", source: "web" });
  assert.deepEqual(body.tokens, { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 });
  assert.equal(typeof body.elapsed_ms, "number");
  assert.equal(seen?.agentId, "chat");
  assert.equal(seen?.systemPrompt, "");
  assert.deepEqual(seen?.context, {
    user_id: "u1",
    workflow_id: body.workflow_id,
    step_id: body.step_id,
  });

  const history = await fetch(
    `${chat.base}/api/v1/chat/history/${body.workflow_id}/${body.step_id}`,
  );
  assert.equal(history.status, 200);
  const { events } = (await history.json()) as { events: TraceEvent[] };
  assert.deepEqual(
    events.map((e) => e.type),
    ["thinking", "tool_start", "tool_result", "step_complete"],
  );
  assert.equal(events[3].data.summary, body.answer);

  const listed = await fetch(`${chat.base}/api/v1/chat/workflows?limit=5`);
  assert.equal(listed.status, 200);
  const { workflows } = (await listed.json()) as {
    workflows: { workflow_id: string; steps: { step_id: string }[] }[];
  };
  const mine = workflows.find((w) => w.workflow_id === body.workflow_id);
  assert.deepEqual(
    mine?.steps.map((s) => s.step_id),
    [body.step_id],
  );
  assert.equal((await fetch(`${chat.base}/api/v1/chat/workflows?limit=0`)).status, 400);
});

test("a step that yields answers with what it waits for; others carry no pending", async (t) => {
  const pending = [
    { kind: "credentials" as const, detail: "COMMUNICATOR_WEBHOOK_URL is not configured" },
  ];
  const chat = await startTestChatApp(createMemoryCache(), async (input) =>
    input.task === "send"
      ? { status: "yield" as const, summary: "Draft ready", metadata: { pending } }
      : { status: "success" as const, summary: "done", metadata: { pending: [] } },
  );
  t.after(() => chat.close());
  const held = (await (await post(chat.base, { message: "send" })).json()) as Record<
    string,
    unknown
  >;
  assert.equal(held.status, "yield");
  assert.deepEqual(held.pending, pending);
  const done = (await (await post(chat.base, { message: "other" })).json()) as Record<
    string,
    unknown
  >;
  assert.equal(done.status, "success");
  assert.equal("pending" in done, false);
});

test("a kernel exception is a 500 with the workflow id and a trace error event", async (t) => {
  const chat = await startTestChatApp(createMemoryCache(), async () => {
    throw new Error("kaboom");
  });
  t.after(() => chat.close());
  const res = await post(chat.base, { message: "x", workflow_id: "wf_err" });
  assert.equal(res.status, 500);
  assert.deepEqual(await res.json(), { error: "kaboom", workflow_id: "wf_err" });
  const replay = await chat.bus.replay("wf_err");
  assert.deepEqual(
    replay.map((e) => [e.type, e.data.message]),
    [
      ["error", "kaboom"],
      ["step_complete", undefined],
    ],
  );
});

test("the stream sends SSE headers, replays, goes live and closes after step_complete", async (t) => {
  let release!: () => void;
  const gate = new Promise<void>((r) => {
    release = r;
  });
  const chat = await startTestChatApp(createMemoryCache(), async (input) => {
    await input.trace.emit("thinking", { thought: "before" });
    await gate;
    return echoKernel(input);
  });
  t.after(() => chat.close());
  const posted = post(chat.base, { message: "hi", workflow_id: "wf_live" });
  while ((await chat.bus.replay("wf_live")).length === 0) await sleep(5);
  const streamed = readSse(`${chat.base}/api/v1/chat/stream/wf_live`);
  // The running step's host listens for cancel requests: one subscription besides the stream.
  while ((chat.bus.cache?.subscriberCount() ?? 0) < 2) await sleep(5);
  release();
  const result = await streamed;
  await posted;
  assert.equal(result.status, 200);
  assert.match(String(result.headers["content-type"]), /^text\/event-stream/);
  assert.equal(result.headers["cache-control"], "no-cache");
  assert.equal(result.headers["x-accel-buffering"], "no");
  assert.equal(result.headers.connection, "keep-alive");
  assert.deepEqual(
    result.events.map((e) => e.type),
    ["thinking", "thinking", "tool_start", "tool_result", "step_complete"],
  );
  assert.deepEqual(result.ids, ["1", "2", "3", "4", "5"]);
  assert.equal(chat.bus.cache?.subscriberCount(), 0);

  const resumed = await readSse(`${chat.base}/api/v1/chat/stream/wf_live`, {
    headers: { "last-event-id": "3" },
  });
  assert.deepEqual(resumed.ids, ["4", "5"], "Last-Event-ID resumes after that sequence");
});

test("the eventsource client follows a chat to its step_complete", async (t) => {
  const chat = await startTestChatApp(createMemoryCache(), echoKernel);
  t.after(() => chat.close());
  const es = new EventSource(`${chat.base}/api/v1/chat/stream/wf_es`);
  t.after(() => es.close());
  const received: TraceEvent[] = [];
  const ids: string[] = [];
  const done = new Promise<void>((resolve, reject) => {
    es.onmessage = (message) => {
      const event = JSON.parse(message.data) as TraceEvent;
      received.push(event);
      ids.push(message.lastEventId);
      if (event.type === "step_complete") {
        es.close();
        resolve();
      }
    };
    es.onerror = (error) => {
      if (received.length === 0) reject(error);
    };
  });
  await new Promise<void>((resolve) => {
    es.onopen = () => resolve();
  });
  while (chat.bus.cache?.subscriberCount() === 0) await sleep(5);
  const res = await post(chat.base, { message: "via es", workflow_id: "wf_es" });
  assert.equal(res.status, 200);
  await done;
  assert.deepEqual(
    received.map((e) => e.type),
    ["thinking", "tool_start", "tool_result", "step_complete"],
  );
  assert.deepEqual(ids, ["1", "2", "3", "4"]);
  assert.equal(received[3].data.status, "success");
});

test("inactivity sends heartbeats, then a timeout event and closes", async (t) => {
  const chat = await startTestChatApp(createMemoryCache(), echoKernel, {
    streamTimeoutMs: 1000,
    heartbeatMs: 50,
  });
  t.after(() => chat.close());
  await chat.bus.publish({ workflow_id: "wf_idle", step_id: "s", type: "thinking", data: {} });
  const result = await readSse(`${chat.base}/api/v1/chat/stream/wf_idle`);
  assert.deepEqual(
    result.events.map((e) => e.type),
    ["thinking", "timeout"],
  );
  assert.ok(result.heartbeats >= 1);
  assert.equal(result.ids.length, 1, "the timeout event carries no id");
  assert.equal(chat.bus.cache?.subscriberCount(), 0);
});

test("without a cache store the stream sends one error event and closes", async (t) => {
  const chat = await startTestChatApp(undefined, echoKernel);
  t.after(() => chat.close());
  const result = await readSse(`${chat.base}/api/v1/chat/stream/wf_x`);
  assert.equal(result.status, 200);
  assert.equal(result.events.length, 1);
  assert.equal(result.events[0].type, "error");
  assert.match(String(result.events[0].data.message), /no cache store/);
});

test("history: 404 unknown, 500 unreadable, traversal rejected", async (t) => {
  const chat = await startTestChatApp(createMemoryCache(), echoKernel);
  t.after(() => chat.close());
  const get = (path: string) => fetch(`${chat.base}/api/v1/chat/history/${path}`);
  assert.equal((await get("wf_none/step_1")).status, 404);
  assert.deepEqual(Object.keys((await (await get("wf_none/step_1")).json()) as object), ["error"]);
  await mkdir(join(chat.dir, "wf_bad", "step_1.jsonl"), { recursive: true });
  const unreadable = await get("wf_bad/step_1");
  assert.equal(unreadable.status, 500);
  assert.deepEqual(await unreadable.json(), { error: "trace cannot be read" });
  for (const path of ["%2e%2e/step_1", "wf/..%2f..%2fetc%2fpasswd", "wf/%2e%2e", ".x/step"]) {
    const res = await get(path);
    assert.ok([400, 404].includes(res.status), `${path} → ${res.status}`);
    assert.notEqual(res.status, 200);
  }
  // A raw request keeps the dots that fetch would normalize away.
  const raw = await new Promise<number>((resolve, reject) => {
    const url = new URL(chat.base);
    request(
      { host: url.hostname, port: url.port, path: "/api/v1/chat/history/../../step_1" },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    )
      .on("error", reject)
      .end();
  });
  assert.notEqual(raw, 200);
});

test("one kernel serves two mounts", async (t) => {
  const chat = await startTestChatApp(createMemoryCache(), echoKernel, { prefix: "x" }, [
    "/api/v1",
    "/v2",
  ]);
  t.after(() => chat.close());
  const res = await post(chat.base, { message: "a", workflow_id: "wf_two" }, "/api/v1/x/chat");
  assert.equal(res.status, 200);
  const { step_id } = (await res.json()) as { step_id: string };
  const history = await fetch(`${chat.base}/v2/x/chat/history/wf_two/${step_id}`);
  assert.equal(history.status, 200);
  const streamed = await readSse(`${chat.base}/v2/x/chat/stream/wf_two`);
  assert.equal(streamed.events.at(-1)?.type, "step_complete");
});

test("500 streams opened and dropped leave no subscription behind", async (t) => {
  const chat = await startTestChatApp(createMemoryCache(), echoKernel);
  t.after(() => chat.close());
  const cache = chat.bus.cache!;
  const requests = Array.from({ length: 500 }, (_, i) => {
    const req = request(`${chat.base}/api/v1/chat/stream/wf_drop_${i % 7}`, (res) => res.resume());
    req.on("error", () => {});
    req.end();
    return req;
  });
  while (cache.subscriberCount() < 500) await sleep(20);
  for (const req of requests) req.destroy();
  while (cache.subscriberCount() > 0) await sleep(20);
  assert.equal(cache.subscriberCount(), 0);
});

test("the factory says so when Fastify cannot be loaded", () => {
  assert.throws(
    () =>
      assertFrameworkAvailable(() => {
        throw new Error("Cannot find module 'fastify'");
      }),
    /needs the web framework package 'fastify'/,
  );
  assert.doesNotThrow(() => assertFrameworkAvailable());
});

test("a server shutting down ends open streams with a final error event", async (t) => {
  const chat = await startTestChatApp(createMemoryCache(), echoKernel);
  let closed = false;
  t.after(() => (closed ? undefined : chat.close()));
  await chat.bus.publish({ workflow_id: "wf_drain", step_id: "s", type: "thinking", data: {} });
  const reading = readSse(`${chat.base}/api/v1/chat/stream/wf_drain`);
  while (chat.bus.cache?.subscriberCount() === 0) await sleep(5);
  closed = true;
  await chat.close();
  const result = await reading;
  assert.deepEqual(
    result.events.map((e) => [e.type, e.data.message]),
    [
      ["thinking", undefined],
      ["error", shutdownMessage],
    ],
  );
});
