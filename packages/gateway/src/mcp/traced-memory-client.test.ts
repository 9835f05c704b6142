import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { otlpAttribute, startOtlpReceiver } from "@atrium/kit/testing";
import { createMemoryClient } from "@atrium/sdk";
import { traceMemoryOperations } from "./traced-memory-client.js";

// In a file of its own: it switches OpenTelemetry on for the whole test process.

const CLIENT = 3;
const record = "My sister's flat is at 12 Rua Augusta.";

/** The memory service's REST answers the MCP tools rely on, each returning `record`. */
const answers: Record<string, unknown> = {
  "/interactions": { success: true, interaction_id: "i1" },
  "/events": { success: true, event_id: "e1" },
  "/context": {
    stm_events: [{ role: "user", type: "message", content: record, timestamp: "t" }],
    relevant_pages: [{ id: "p1", topic: "home", summary: record, timestamp: "t" }],
    segments: [],
  },
  "/context/search": {
    results: [{ content: record, similarity_score: 0.9, source_type: "chain", source_id: "c1" }],
  },
  "/forget": {
    success: true,
    erasure_id: "er1",
    events_erased: 3,
    chains_erased: 1,
    chains_rebuilt: 0,
    entities_erased: 0,
    payloads_erased: 0,
  },
};

test("the MCP tools' memory calls are GenAI memory-operation spans with no query, record or key", async (t) => {
  const otlp = await startOtlpReceiver();
  t.after(() => otlp.close());
  const memoryServer = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      const path = new URL(request.url ?? "/", "http://x").pathname.replace(
        /^\/api\/v1\/sessions\/[^/]+/,
        "",
      );
      if (request.url?.startsWith("/api/v1/sessions/gone/")) {
        response.writeHead(404, { "content-type": "application/json" });
        response.end(JSON.stringify({ error: "no session gone" }));
        return;
      }
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify(answers[path] ?? {}));
    });
  });
  await new Promise<void>((resolve) => memoryServer.listen(0, "127.0.0.1", resolve));
  const memoryUrl = `http://127.0.0.1:${(memoryServer.address() as AddressInfo).port}`;
  t.after(() => new Promise<void>((resolve) => memoryServer.close(() => resolve())));

  const apiKey = "mem-secret-key-4713";
  const memory = traceMemoryOperations(
    createMemoryClient({ baseUrl: memoryUrl, apiKey }),
    memoryUrl,
  );
  const message = "Remember where my sister lives";
  const query = "where does my sister live";
  await memory.storeInteraction("s1", { user_message: message, agent_response: "Noted." });
  await memory.storeEvent("s1", { role: "user", type: "message", content: message });
  assert.equal((await memory.search("s1", { query })).length, 1);
  await memory.getContext("s1", { query });
  await memory.getContext("s1", {});
  await memory.forget("s1", { event_ids: ["evt_1"] });
  await memory.forget("s1", { scope: "user" });
  await assert.rejects(memory.search("gone", { query }));
  await otlp.close();

  const exported = otlp.bodies.join("\n");
  const spans = otlp.spans();
  const attribute = otlpAttribute;
  const operations = spans.filter((s) => attribute(s, "gen_ai.operation.name") !== undefined);
  // Spans are exported in the order they end, which is the order of the calls here.
  const failed = operations.pop();
  assert.equal(failed?.name, "search_memory");
  assert.equal(failed?.status?.code, 2, "ERROR");
  assert.equal(otlpAttribute(failed, "error.type"), "AtriumHttpError");
  assert.equal(otlpAttribute(failed, "gen_ai.memory.record.count"), undefined);
  assert.deepEqual(
    operations.map((s) => [s.name, Number(attribute(s, "gen_ai.memory.record.count"))]),
    [
      ["create_memory", 2],
      ["create_memory", 1],
      ["search_memory", 1],
      ["search_memory", 2],
      ["delete_memory", 1],
      ["delete_memory", 3],
    ],
  );
  for (const span of operations) {
    assert.equal(span.kind, CLIENT);
    assert.equal(attribute(span, "gen_ai.operation.name"), span.name);
    assert.equal(attribute(span, "server.address"), "127.0.0.1");
    assert.equal(Number(attribute(span, "server.port")), Number(new URL(memoryUrl).port));
    const http = spans.filter((s) => s.parentSpanId === span.spanId);
    assert.equal(http.length, 1, `${span.name}: its HTTP call is its child`);
  }
  assert.equal(attribute(operations[4], "gen_ai.memory.record.id"), "evt_1");
  assert.equal(attribute(operations[5], "gen_ai.memory.record.id"), undefined);
  // A GetContext without a query is no memory operation: outside a request, not even an HTTP span.
  assert.equal(spans.length, 14);

  for (const secret of [message, query, "sister", record, apiKey]) {
    assert.ok(!exported.includes(secret), `nothing exported holds ${JSON.stringify(secret)}`);
  }
});
