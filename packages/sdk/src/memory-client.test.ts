import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { AtriumHttpError, createMemoryClient } from "./index.js";
import { type LoopbackServer, sendJson, startLoopbackServer } from "./testing/loopback-server.js";

describe("memory client", () => {
  let memory: LoopbackServer;

  before(async () => {
    memory = await startLoopbackServer((request, response) => {
      const route = `${request.method} ${request.url}`;
      switch (route) {
        case "POST /api/v1/sessions":
          return sendJson(response, 200, { session_id: "s1", created_at: "2030-01-01T00:00:00Z" });
        case "POST /api/v1/sessions/s1/interactions":
          return sendJson(response, 200, { success: true, interaction_id: "" });
        case "POST /api/v1/sessions/s1/events":
          return sendJson(response, 200, { success: true, event_id: "e1" });
        case "GET /api/v1/sessions/s1/context?limit=5&query=paris":
          return sendJson(response, 200, { stm_events: [], relevant_pages: [], segments: [] });
        case "POST /api/v1/sessions/s1/context/search":
          return sendJson(response, 200, {
            results: [{ content: "Paris", similarity_score: 0.9 }],
          });
        case "POST /api/v1/sessions/s1/forget":
          return sendJson(response, 200, { success: true, erasure_id: "x1", events_erased: 2 });
        case "GET /api/v1/health":
          return sendJson(response, 200, { status: "healthy", dependencies: {} });
        case "POST /api/v1/admin/analytics/trigger":
          return sendJson(response, 200, { success: true, message: "started" });
        default:
          return sendJson(response, 404, { code: "NotFound", message: "session not found" });
      }
    });
  });
  after(() => memory.close());

  it("wraps every implemented memory route with its body", async () => {
    const client = createMemoryClient({ baseUrl: memory.url, apiKey: "mem-key" });
    const { session_id } = await client.createSession({
      tenant_id: "t",
      user_id: "u",
      agent_id: "a",
    });
    assert.deepEqual(JSON.parse(memory.requests.at(-1)?.body.toString() ?? ""), {
      tenant_id: "t",
      user_id: "u",
      agent_id: "a",
    });
    assert.equal(memory.requests.at(-1)?.headers["x-api-key"], "mem-key");
    assert.equal(
      (await client.storeInteraction(session_id, { user_message: "hi", agent_response: "hello" }))
        .success,
      true,
    );
    assert.equal(
      (await client.storeEvent(session_id, { type: "thought", content: "hmm" })).event_id,
      "e1",
    );
    assert.deepEqual(
      (await client.getContext(session_id, { limit: 5, query: "paris" })).stm_events,
      [],
    );
    const results = await client.search(session_id, { query: "capital", limit: 3 });
    assert.equal(results[0].content, "Paris");
    assert.equal((await client.forget(session_id, { scope: "user" })).events_erased, 2);
    assert.deepEqual(JSON.parse(memory.requests.at(-1)?.body.toString() ?? ""), { scope: "user" });
    assert.equal((await client.health()).status, "healthy");
    assert.equal((await client.triggerGraphAnalytics()).success, true);
  });

  it("throws AtriumHttpError with the status and body", async () => {
    const client = createMemoryClient({ baseUrl: memory.url });
    await assert.rejects(client.storeEvent("nope", { type: "message" }), (error: unknown) => {
      assert.ok(error instanceof AtriumHttpError);
      assert.equal(error.status, 404);
      assert.deepEqual(error.body, { code: "NotFound", message: "session not found" });
      return true;
    });
  });
});
