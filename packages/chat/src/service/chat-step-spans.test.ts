import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { createLogger } from "@atrium/kit";
import { type OtlpSpan, otlpAttribute, startOtlpReceiver } from "@atrium/kit/testing";
import { runTool, type StepContext } from "../kernel/step-context.js";
import { startFakeMemory } from "../testing/memory-server.js";
import { startScriptedLlm } from "../testing/scripted-llm.js";
import { startAgentService } from "./start-chat-service.js";

// In a file of its own: it switches OpenTelemetry on for the whole test process.

const INTERNAL = 1;
const CLIENT = 3;

test("a chat step's tools and memory operations are GenAI spans, with no content or key", async (t) => {
  const otlp = await startOtlpReceiver();
  t.after(() => otlp.close());

  const note = "The user travelled to Porto with her sister in May.";
  const memory = await startFakeMemory([note]);
  t.after(() => memory.close());
  const answer = "You went to Porto with your sister.";
  const llm = await startScriptedLlm((request) =>
    request.response_format
      ? { content: '{"role":"researcher","reason":"recall"}' }
      : { content: answer },
  );
  t.after(() => llm.close());
  const dir = await mkdtemp(join(tmpdir(), "agent-spans-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const memoryKey = "mem-secret-key-4711";
  const llmKey = "sk-secret-llm-key-4712";
  const service = await startAgentService({
    env: {
      AGENT_PORT: "0",
      AGENT_HOST: "127.0.0.1",
      TRACES_DIR: dir,
      LLM_BASE_URL: llm.baseUrl,
      LLM_API_KEY: llmKey,
      MEMORY_GRPC_URL: memory.url,
      MEMORY_API_KEY: memoryKey,
    },
    logger: createLogger({ name: "agent", level: "silent" }),
  });
  t.after(() => service.stop());

  const message = "Where did I travel with my sister last spring?";
  const response = await fetch(`${service.urls.rest}/api/v1/chat`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ message, context: { tenant_id: "acme", user_id: "alice" } }),
  });
  assert.equal(response.status, 200, await response.clone().text());
  assert.equal(((await response.json()) as { status: string }).status, "success");
  assert.equal(memory.stored.length, 1, "the turn is stored");
  // A tool that fails, called alone: an ERROR span, with no arguments recorded.
  const alone = { trace: { emit: async () => {} } } as unknown as StepContext;
  const url = "https://example.test/private-page";
  await assert.rejects(
    runTool(alone, "researcher", "web.fetch", { url }, () =>
      Promise.reject(new TypeError("fetch failed")),
    ),
  );
  await otlp.close();

  const exported = otlp.bodies.join("\n");
  const spans = otlp.spans();
  const names = spans.map((s) => s.name).join(", ");
  const attribute = otlpAttribute;
  const parentOf = (span: OtlpSpan | undefined) =>
    spans.find((s) => s.spanId === span?.parentSpanId);

  const step = spans.find((s) => s.name === "invoke_agent chat");
  assert.ok(step, `an invoke_agent span among ${names}`);

  // The observe phase: a tool of the kernel, a memory search inside it, its gRPC call inside that.
  const observe = spans.find((s) => s.name === "execute_tool memory.context");
  assert.ok(observe, `an execute_tool span among ${names}`);
  assert.equal(observe.kind, INTERNAL);
  assert.equal(observe.parentSpanId, step.spanId);
  assert.equal(attribute(observe, "gen_ai.operation.name"), "execute_tool");
  assert.equal(attribute(observe, "gen_ai.tool.name"), "memory.context");
  assert.equal(attribute(observe, "gen_ai.tool.type"), "datastore");
  assert.match(String(attribute(observe, "gen_ai.tool.call.id")), /^[0-9a-f-]{36}$/);
  const searches = spans.filter((s) => s.name === "search_memory");
  const contextSearch = searches.find((s) => s.parentSpanId === observe.spanId);
  assert.ok(contextSearch, "GetContext with a query is a search_memory span of the tool");
  assert.equal(contextSearch.kind, CLIENT);
  assert.equal(attribute(contextSearch, "gen_ai.operation.name"), "search_memory");
  assert.equal(attribute(contextSearch, "gen_ai.memory.store.id"), "acme");
  assert.equal(Number(attribute(contextSearch, "gen_ai.memory.record.count")), 1);
  assert.equal(attribute(contextSearch, "server.address"), "127.0.0.1");
  assert.equal(Number(attribute(contextSearch, "server.port")), Number(new URL(memory.url).port));
  const getContext = spans.find(
    (s) => s.name === "memory.v1.MemoryService/GetContext" && s.kind === CLIENT,
  );
  assert.equal(getContext?.parentSpanId, contextSearch.spanId, "the gRPC call is its child");

  // The researcher's search: a sub-agent's tool within the same step.
  const recall = spans.find((s) => s.name === "execute_tool memory.search");
  assert.ok(recall, `the researcher's tool among ${names}`);
  assert.equal(recall.parentSpanId, step.spanId);
  const search = searches.find((s) => s.parentSpanId === recall.spanId);
  assert.ok(search, "SearchMemory is a search_memory span of the tool");
  assert.equal(Number(attribute(search, "gen_ai.memory.record.count")), 1);
  assert.equal(
    parentOf(spans.find((s) => s.name === "memory.v1.MemoryService/SearchMemory"))?.spanId,
    search.spanId,
  );

  // The finished turn is stored: one create_memory of two records, within the step.
  const store = spans.find((s) => s.name === "create_memory");
  assert.ok(store, `a create_memory span among ${names}`);
  assert.equal(store.kind, CLIENT);
  assert.equal(store.parentSpanId, step.spanId);
  assert.equal(attribute(store, "gen_ai.operation.name"), "create_memory");
  assert.equal(attribute(store, "gen_ai.memory.store.id"), "acme");
  assert.equal(Number(attribute(store, "gen_ai.memory.record.count")), 2);
  assert.equal(
    parentOf(spans.find((s) => s.name === "memory.v1.MemoryService/StoreInteraction"))?.spanId,
    store.spanId,
  );

  const failed = spans.find((s) => s.name === "execute_tool web.fetch");
  assert.equal(failed?.status?.code, 2, "ERROR");
  assert.equal(attribute(failed, "error.type"), "TypeError");
  assert.equal(attribute(failed, "gen_ai.tool.type"), "extension");

  // No query or message, no record, no answer and no key in any exported byte.
  for (const secret of [message, "sister", note, answer, memoryKey, llmKey, url]) {
    assert.ok(!exported.includes(secret), `nothing exported holds ${JSON.stringify(secret)}`);
  }
});
