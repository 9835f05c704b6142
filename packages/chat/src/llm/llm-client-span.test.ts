import assert from "node:assert/strict";
import { test } from "node:test";
import { otlpAttribute, startOtlpReceiver } from "@atrium/kit/testing";
import { startScriptedLlm } from "../testing/scripted-llm.js";
import type { TraceEmitter } from "../trace/trace-bus.js";
import { createLlmClient } from "./llm-client.js";

// In a file of its own: it switches OpenTelemetry on for the whole test process.

const trace: TraceEmitter = { workflowId: "wf", stepId: "s", emit: async () => {} };

test("an LLM call is a GenAI chat span with its model and tokens, and no message content", async (t) => {
  const otlp = await startOtlpReceiver();
  t.after(() => otlp.close());
  const llm = await startScriptedLlm(() => ({ content: "Lisbon in May." }));
  t.after(() => llm.close());
  const client = createLlmClient({ baseUrl: llm.baseUrl, apiKey: "sk-secret-key", model: "m-1" });
  const secretQuestion = "Where did I travel with my sister?";
  await client.complete({
    tier: "router",
    purpose: "answer",
    messages: [{ role: "user", content: secretQuestion }],
    trace,
    maxTokens: 64,
  });
  await otlp.close();

  const exported = otlp.bodies.join("\n");
  const spans = otlp.spans();
  const span = spans.find((s) => s.name === "chat m-1");
  assert.ok(span, `a chat span among ${spans.map((s) => s.name).join(", ")}`);
  assert.equal(span.kind, 3, "CLIENT");
  const attribute = (key: string) => otlpAttribute(span, key);
  assert.equal(attribute("gen_ai.operation.name"), "chat");
  assert.equal(attribute("gen_ai.request.model"), "m-1");
  assert.equal(attribute("gen_ai.response.model"), "m-1");
  assert.equal(Number(attribute("gen_ai.request.max_tokens")), 64);
  assert.ok(Number(attribute("gen_ai.usage.input_tokens")) > 0);
  assert.ok(Number(attribute("gen_ai.usage.output_tokens")) > 0);
  assert.equal(attribute("server.address"), "127.0.0.1");
  // The HTTP call to the model is the chat span's child.
  const http = spans.find((s) => s.kind === 3 && s.name === "POST");
  assert.ok(http, "the HTTP call's span");
  assert.equal(http.parentSpanId, span.spanId);
  assert.ok(!exported.includes(secretQuestion), "no message content");
  assert.ok(!exported.includes("Lisbon"), "no answer content");
  assert.ok(!exported.includes("sk-secret-key"), "no key");
});
