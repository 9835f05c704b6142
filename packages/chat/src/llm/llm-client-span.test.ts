import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { startTracing } from "@atrium/kit";
import { startScriptedLlm } from "../testing/scripted-llm.js";
import type { TraceEmitter } from "../trace/trace-bus.js";
import { createLlmClient } from "./llm-client.js";

// In a file of its own: it switches OpenTelemetry on for the whole test process.

interface OtlpSpan {
  name: string;
  kind: number;
  spanId: string;
  parentSpanId?: string;
  attributes: { key: string; value: Record<string, unknown> }[];
}

const trace: TraceEmitter = { workflowId: "wf", stepId: "s", emit: async () => {} };

test("an LLM call is a GenAI chat span with its model and tokens, and no message content", async (t) => {
  const bodies: string[] = [];
  const receiver = createServer((request, response) => {
    let body = "";
    request.setEncoding("utf8");
    request.on("data", (chunk: string) => {
      body += chunk;
    });
    request.on("end", () => {
      bodies.push(body);
      response.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  t.after(() => new Promise<void>((resolve) => receiver.close(() => resolve())));
  // The SDK's exporter reads its endpoint from process.env itself.
  const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  Object.assign(process.env, {
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
  });
  t.after(() => {
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    delete process.env.OTEL_EXPORTER_OTLP_PROTOCOL;
  });
  const tracing = await startTracing({ serviceName: "atrium-test" });
  assert.ok(tracing);
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
  await tracing.shutdown();

  const exported = bodies.join("\n");
  const spans = bodies.flatMap((body) =>
    (
      JSON.parse(body) as {
        resourceSpans: { scopeSpans: { scope: { name: string }; spans: OtlpSpan[] }[] }[];
      }
    ).resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)),
  );
  const span = spans.find((s) => s.name === "chat m-1");
  assert.ok(span, `a chat span among ${spans.map((s) => s.name).join(", ")}`);
  assert.equal(span.kind, 3, "CLIENT");
  const attribute = (key: string) => {
    const value = span.attributes.find((a) => a.key === key)?.value;
    return value ? Object.values(value)[0] : undefined;
  };
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
