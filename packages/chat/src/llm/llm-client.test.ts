import assert from "node:assert/strict";
import { test } from "node:test";
import { startScriptedLlm } from "../testing/scripted-llm.js";
import type { TraceEmitter } from "../trace/trace-bus.js";
import type { TraceEventType } from "../trace/trace-event.js";
import { createLlmClient, LlmError } from "./llm-client.js";

function recorder() {
  const events: { type: TraceEventType; data: Record<string, unknown> }[] = [];
  const trace: TraceEmitter = {
    workflowId: "wf",
    stepId: "s",
    async emit(type, data) {
      events.push({ type, data });
    },
  };
  return { events, trace };
}

test("streams tokens into thinking events between llm_request and llm_response", async (t) => {
  const llm = await startScriptedLlm(() => ({ content: "The answer is 42." }));
  t.after(() => llm.close());
  const client = createLlmClient({
    baseUrl: llm.baseUrl,
    apiKey: "sk-test",
    model: "base",
    tierModels: { coder: "code-model" },
  });
  const { events, trace } = recorder();
  const result = await client.complete({
    tier: "coder",
    purpose: "answer",
    messages: [{ role: "user", content: "what is it" }],
    trace,
    streamThinking: true,
  });
  assert.equal(result.text, "The answer is 42.");
  assert.equal(result.model, "code-model");
  assert.deepEqual(result.usage, { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 });
  assert.equal(llm.requests[0].authorization, "Bearer sk-test");
  assert.equal(llm.requests[0].stream, true);
  assert.deepEqual(
    events.map((e) => e.type),
    ["llm_request", "thinking", "thinking", "thinking", "thinking", "llm_response"],
  );
  assert.equal(
    events
      .filter((e) => e.type === "thinking")
      .map((e) => e.data.thought)
      .join(""),
    "The answer is 42.",
  );
  const response = events.at(-1)!.data;
  assert.equal(response.model, "code-model");
  assert.deepEqual(response.usage, result.usage);
  assert.equal(typeof response.duration_ms, "number");
  assert.equal(response.call_id, events[0].data.call_id);
});

test("structured output sends a json_schema response format, without streaming", async (t) => {
  const llm = await startScriptedLlm(() => ({ content: '{"role":"coder","reason":"code"}' }));
  t.after(() => llm.close());
  const client = createLlmClient({ baseUrl: llm.baseUrl, model: "m" });
  const { trace } = recorder();
  const result = await client.complete({
    tier: "router",
    purpose: "route",
    messages: [{ role: "user", content: "x" }],
    trace,
    streamThinking: true,
    jsonSchema: { name: "route", schema: { type: "object" } },
  });
  assert.deepEqual(JSON.parse(result.text), { role: "coder", reason: "code" });
  assert.equal(llm.requests[0].stream, false);
  assert.equal(llm.requests[0].response_format?.json_schema?.name, "route");
  assert.equal(llm.requests[0].authorization, undefined);
});

test("an HTTP error becomes an LlmError and an llm_response with the error", async (t) => {
  const llm = await startScriptedLlm(() => ({ content: "bad key", status: 401 }));
  t.after(() => llm.close());
  const client = createLlmClient({ baseUrl: llm.baseUrl, model: "m" });
  const { events, trace } = recorder();
  const failure = await client
    .complete({ tier: "router", purpose: "x", messages: [], trace })
    .catch((e: unknown) => e);
  assert.ok(failure instanceof LlmError);
  assert.equal(failure.isAuthFailure, true);
  assert.match(String(events.at(-1)?.data.error), /HTTP 401/);
});

test("rate limits and server errors are retried; each try is traced", async (t) => {
  let calls = 0;
  const llm = await startScriptedLlm(() => {
    calls++;
    if (calls === 1) return { content: "slow down", status: 429 };
    if (calls === 2) return { content: "oops", status: 503 };
    return { content: "fine" };
  });
  t.after(() => llm.close());
  const client = createLlmClient({ baseUrl: llm.baseUrl, model: "m", retryBaseMs: 1 });
  const { events, trace } = recorder();
  const result = await client.complete({ tier: "router", purpose: "x", messages: [], trace });
  assert.equal(result.text, "fine");
  assert.deepEqual(
    events.filter((e) => e.type === "llm_request").map((e) => e.data.attempt),
    [1, 2, 3],
  );
  assert.match(String(events[1].data.error), /HTTP 429/);

  const denied = await startScriptedLlm(() => ({ content: "no", status: 401 }));
  t.after(() => denied.close());
  const noRetry = createLlmClient({ baseUrl: denied.baseUrl, model: "m", retryBaseMs: 1 });
  await assert.rejects(noRetry.complete({ tier: "router", purpose: "x", messages: [], trace }));
  assert.equal(denied.requests.length, 1, "a refused key is not retried");
});
