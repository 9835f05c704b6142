import assert from "node:assert/strict";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { eventually } from "@atrium/kit/testing";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import {
  httpStatus,
  type Json,
  ok,
  startTestService,
  type TestService,
  type Transport,
} from "./memory-service-harness.js";

/**
 * The memory contract over REST and gRPC against the real service (PGlite, in-process cache and
 * queue, the default GloVe embeddings, a filesystem blob store). Each transport works in its own tenant, so
 * the two runs never see each other's data.
 */
let svc: TestService;
before(async () => {
  const blobDir = mkdtempSync(join(tmpdir(), "atrium-memory-blobs-"));
  svc = await startTestService({ BLOB_STORE_URL: `file://${blobDir}` });
});
after(() => svc?.stop());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function expectError(
  result: Awaited<ReturnType<Transport["call"]>>,
  code: string,
  message?: RegExp,
) {
  assert.equal(result.ok, false, `expected ${code}, got success`);
  if (result.ok) return;
  assert.equal(result.code, code, result.message);
  if (result.status !== undefined) assert.equal(result.status, httpStatus[code]);
  if (message) assert.match(result.message, message);
}

for (const name of ["rest", "grpc"] as const) {
  describe(`memory service over ${name}`, () => {
    const t = () => svc.transports.find((x) => x.name === name) as Transport;
    const tenant = `tenant-${name}`;
    const session = async (userId = "u1", agentId = "a1", extra: Record<string, string> = {}) =>
      (
        await ok(t(), "createSession", {
          tenant_id: tenant,
          user_id: userId,
          agent_id: agentId,
          ...extra,
        })
      ).session_id as string;

    test("CreateSession: a new session per call, created_at set; tenant and user required", async () => {
      const a = await ok(t(), "createSession", {
        tenant_id: tenant,
        user_id: "u1",
        metadata: { k: "v" },
      });
      const b = await ok(t(), "createSession", {
        tenant_id: tenant,
        user_id: "u1",
        metadata: { k: "v" },
      });
      assert.match(a.session_id, UUID);
      assert.notEqual(a.session_id, b.session_id);
      assert.ok(Math.abs(Date.parse(a.created_at) - Date.now()) < 60_000);
      expectError(
        await t().call("createSession", { user_id: "u1" }),
        "InvalidArgument",
        /tenant_id/,
      );
      expectError(
        await t().call("createSession", { tenant_id: tenant }),
        "InvalidArgument",
        /user_id/,
      );
    });

    test("StoreInteraction: two events with metadata, chronological window; unknown session NotFound", async () => {
      const id = await session("window-user");
      for (let i = 1; i <= 3; i++) {
        const r = await ok(t(), "storeInteraction", {
          session_id: id,
          user_message: `question ${i}`,
          agent_response: `answer ${i}`,
          metadata: { turn: String(i) },
        });
        assert.deepEqual(r, { success: true, interaction_id: "" });
      }
      await ok(t(), "storeInteraction", { session_id: id, user_message: "question 4" });
      const context = await ok(t(), "getContext", { session_id: id });
      assert.equal(context.stm_events.length, 7);
      assert.deepEqual(
        context.stm_events.map((e: Json) => `${e.role}/${e.type}:${e.content}`),
        [
          "user/message:question 1",
          "agent/message:answer 1",
          "user/message:question 2",
          "agent/message:answer 2",
          "user/message:question 3",
          "agent/message:answer 3",
          "user/message:question 4",
        ],
      );
      assert.deepEqual(context.stm_events[2].metadata, { turn: "2" });
      assert.deepEqual(context.stm_events[3].metadata, { turn: "2" });
      const times = context.stm_events.map((e: Json) => Date.parse(e.timestamp));
      assert.deepEqual(
        [...times].sort((a, b) => a - b),
        times,
      );
      const limited = await ok(t(), "getContext", { session_id: id, limit: 3 });
      assert.deepEqual(
        limited.stm_events.map((e: Json) => e.content),
        ["question 3", "answer 3", "question 4"],
      );
      expectError(
        await t().call("storeInteraction", {
          session_id: "00000000-0000-4000-8000-000000000000",
          user_message: "x",
        }),
        "NotFound",
      );
      expectError(
        await t().call("storeInteraction", { session_id: "not-a-session", user_message: "x" }),
        "NotFound",
      );
    });

    test("StoreInteraction: a client timestamp is kept", async () => {
      const id = await session("ts-user");
      await ok(t(), "storeInteraction", {
        session_id: id,
        user_message: "old",
        timestamp: "2024-05-01T10:00:00Z",
      });
      const context = await ok(t(), "getContext", { session_id: id });
      assert.equal(context.stm_events[0].timestamp, "2024-05-01T10:00:00Z");
    });

    test("memory is keyed by scope: a new session of the same scope sees the window", async () => {
      const first = await session("scope-user", "agent-x");
      await ok(t(), "storeInteraction", { session_id: first, user_message: "remember me" });
      const second = await session("scope-user", "agent-x");
      const other = await session("scope-user", "agent-y");
      assert.equal(
        (await ok(t(), "getContext", { session_id: second })).stm_events[0].content,
        "remember me",
      );
      assert.equal((await ok(t(), "getContext", { session_id: other })).stm_events.length, 0);
    });

    test("GetContext: segments empty, user_persona unset, ltpm not_implemented", async () => {
      const id = await session("ctx-user");
      const context = await ok(t(), "getContext", { session_id: id });
      assert.deepEqual(context.segments, []);
      assert.equal(context.user_persona, undefined);
      assert.equal(context.ltpm.status, "not_implemented");
      assert.deepEqual(context.stm_events, []);
      expectError(
        await t().call("getContext", { session_id: "00000000-0000-4000-8000-000000000000" }),
        "NotFound",
      );
    });

    test("StoreEvent: role default system, all four types, validation names the value", async () => {
      const id = await session("event-user");
      for (const type of ["message", "thought", "action", "observation"]) {
        const r = await ok(t(), "storeEvent", { session_id: id, type, content: `a ${type}` });
        assert.equal(r.success, true);
        assert.match(r.event_id, UUID);
      }
      const context = await ok(t(), "getContext", { session_id: id });
      assert.deepEqual(
        context.stm_events.map((e: Json) => [e.role, e.type]),
        [
          ["system", "message"],
          ["system", "thought"],
          ["system", "action"],
          ["system", "observation"],
        ],
      );
      expectError(
        await t().call("storeEvent", { session_id: id, type: "dream" }),
        "InvalidArgument",
        /"dream"/,
      );
      expectError(
        await t().call("storeEvent", { session_id: id, type: "message", role: "robot" }),
        "InvalidArgument",
        /"robot"/,
      );
      expectError(await t().call("storeEvent", { session_id: id }), "InvalidArgument", /type/);
      expectError(
        await t().call("storeEvent", {
          session_id: "00000000-0000-4000-8000-000000000000",
          type: "message",
        }),
        "NotFound",
      );
    });

    test("StoreEvent: a payload goes to the blob store under the tenant and session; mime_type required", async () => {
      const id = await session("blob-user");
      const payload = Buffer.from("%PDF-1.4 pretend").toString("base64");
      expectError(
        await t().call("storeEvent", { session_id: id, type: "observation", payload }),
        "InvalidArgument",
        /mime_type/,
      );
      const r = await ok(t(), "storeEvent", {
        session_id: id,
        role: "agent",
        type: "observation",
        content: "a report",
        payload,
        mime_type: "application/pdf",
      });
      const [event] = (await ok(t(), "getContext", { session_id: id })).stm_events;
      assert.equal(event.blob_mime_type, "application/pdf");
      assert.match(event.blob_uri, new RegExp(`^file://.*/tenants/${tenant}/sessions/${id}/`));
      assert.equal(readFileSync(fileURLToPath(event.blob_uri), "utf8"), "%PDF-1.4 pretend");
      assert.match(r.event_id, UUID);
    });

    test("StoreEvent: repeated automation events of one execution are coalesced with a count", async () => {
      const id = await session("wf-user");
      const metadata = {
        workflow_id: "wf-1",
        execution_id: "ex-1",
        step_id: "poll",
        origin_service: "scheduler",
      };
      for (let i = 1; i <= 3; i++) {
        await ok(t(), "storeEvent", {
          session_id: id,
          role: "agent",
          type: "action",
          content: `poll ${i}`,
          metadata,
        });
      }
      await ok(t(), "storeEvent", {
        session_id: id,
        role: "agent",
        type: "observation",
        content: "done",
        metadata,
      });
      await ok(t(), "storeEvent", {
        session_id: id,
        role: "agent",
        type: "observation",
        content: "other run",
        metadata: { ...metadata, execution_id: "ex-2" },
      });
      const events = (await ok(t(), "getContext", { session_id: id })).stm_events;
      assert.deepEqual(
        events.map((e: Json) => e.content),
        ["poll 3", "done", "other run"],
      );
      assert.equal(events[0].metadata.coalesced_count, "3");
      assert.equal(events[1].metadata.coalesced_count, undefined);
    });

    test("SearchMemory: pages of the user across agents, scores, limit, filter, scoping", async () => {
      const a1 = await session("search-user", "agent-1");
      const a2 = await session("search-user", "agent-2");
      const stranger = await session("someone-else", "agent-1");
      const turns: [string, string, string, Record<string, string>][] = [
        [
          a1,
          "I bought new hiking boots for the mountain trail in the Alps",
          "Great, hiking boots need breaking in.",
          { project: "outdoor" },
        ],
        [
          a1,
          "How do I file my quarterly tax return as a freelancer?",
          "Quarterly tax estimates are due four times a year.",
          { project: "money" },
        ],
        [
          a2,
          "My sourdough bread starter smells like acetone",
          "Feed the sourdough starter more often.",
          { project: "kitchen" },
        ],
      ];
      for (const [session_id, user_message, agent_response, metadata] of turns) {
        await ok(t(), "storeInteraction", { session_id, user_message, agent_response, metadata });
      }
      expectError(
        await t().call("searchMemory", { session_id: a2, query: "  " }),
        "InvalidArgument",
        /query/,
      );
      expectError(
        await t().call("searchMemory", {
          session_id: "00000000-0000-4000-8000-000000000000",
          query: "x",
        }),
        "NotFound",
      );
      // Each chain is found by its own words once the chain check has run.
      await eventually("three chains are searchable", async () => {
        for (const query of ["hiking boots", "tax return", "sourdough starter"]) {
          const found = (await ok(t(), "searchMemory", { session_id: a2, query })).results;
          if (found[0]?.source_type !== "dialogue_page") return false;
        }
        return true;
      });
      const results: Json[] = (
        await ok(t(), "searchMemory", { session_id: a2, query: "hiking boots" })
      ).results;
      assert.equal(results[0].source_type, "dialogue_page");
      assert.match(results[0].content, /boots/);
      assert.match(results[0].source_id, UUID);
      assert.ok(results[0].similarity_score > 0.3 && results[0].similarity_score <= 1);
      for (let i = 1; i < results.length; i++)
        assert.ok(results[i - 1].similarity_score >= results[i].similarity_score);
      const one = await ok(t(), "searchMemory", {
        session_id: a1,
        query: "sourdough starter",
        limit: 1,
        similarity_threshold: 0.99,
      });
      assert.equal(one.results.length, 1);
      assert.match(one.results[0].content, /sourdough/i);
      // The filter keeps out the chain that matches best: what is left is the money chain, or
      // nothing where it has nothing to do with the query.
      const filtered = await ok(t(), "searchMemory", {
        session_id: a1,
        query: "hiking boots tax",
        filter: { project: "money" },
      });
      assert.equal(filtered.results.length, 1);
      assert.match(filtered.results[0].content, /tax/);
      const unrelated = await ok(t(), "searchMemory", {
        session_id: a1,
        query: "hiking boots",
        filter: { project: "money" },
      });
      assert.ok(unrelated.results.every((r: Json) => !/boots/.test(r.content)));
      const none = await ok(t(), "searchMemory", { session_id: stranger, query: "hiking boots" });
      assert.deepEqual(none.results, []);
      const pages = await ok(t(), "getContext", { session_id: a1, query: "tax return" });
      assert.match(pages.relevant_pages[0].summary, /tax/);
      assert.deepEqual(pages.relevant_pages[0].embedding, []);
      assert.ok(
        pages.relevant_pages[0].metadata.event_ids.split(",").every((x: string) => UUID.test(x)),
      );
      const recent = await ok(t(), "getContext", { session_id: a2 });
      assert.match(recent.relevant_pages[0].summary, /sourdough/i);
    });

    test("SearchMemory: a question in other words finds the turn that answers it", async () => {
      const id = await session("other-words-user");
      const turns = [
        ["The new sofa gets delivered on Friday.", "I will remind you on Thursday."],
        ["My sister takes her kids to the zoo next month.", "That sounds like fun."],
        ["I finally fixed the leaking kitchen tap.", "Well done."],
      ];
      for (const [user_message, agent_response] of turns) {
        await ok(t(), "storeInteraction", { session_id: id, user_message, agent_response });
      }
      await eventually("every turn is in a chain", async () => {
        const { relevant_pages } = await ok(t(), "getContext", { session_id: id });
        const chained = relevant_pages.flatMap((p: Json) => p.metadata.event_ids.split(","));
        return chained.length === turns.length * 2;
      });
      // No word in common with the turn that answers: only the embedder can tell which it is.
      for (const [query, answer] of [
        ["When is the couch arriving?", /sofa/],
        ["Which animals will the children see?", /zoo/],
        ["Who did the plumbing repair?", /tap/],
      ] as const) {
        const { results } = await ok(t(), "searchMemory", { session_id: id, query });
        assert.match(results[0]?.content ?? "", answer, query);
      }
    });

    test("SearchMemory: a result lists its turns for a program; a matched reply brings the user turn it answers", async () => {
      const id = await session(`turns-${name}`);
      await ok(t(), "storeInteraction", {
        session_id: id,
        user_message: "We adopted a retired greyhound last week.",
        agent_response: "Biscuit sounds lovely.",
      });
      await ok(t(), "storeInteraction", {
        session_id: id,
        user_message: "The weather was grey all day.",
        agent_response: "Grey days are long.",
      });
      await eventually("every turn is in a chain", async () => {
        const { relevant_pages } = await ok(t(), "getContext", { session_id: id });
        return relevant_pages.flatMap((p: Json) => p.metadata.event_ids.split(",")).length === 4;
      });
      // Only the reply holds the word: the user's turn that names the dog comes with it.
      const [first] = (await ok(t(), "searchMemory", { session_id: id, query: "Biscuit" })).results;
      assert.match(first.content, /greyhound[\s\S]*Biscuit/);
      assert.deepEqual(
        first.turns.map((turn: Json) => [turn.role, turn.text]),
        [
          ["user", "We adopted a retired greyhound last week."],
          ["agent", "Biscuit sounds lovely."],
        ],
      );
      for (const turn of first.turns) {
        assert.match(turn.event_id, UUID);
        assert.equal(turn.session_id, id);
        assert.equal(turn.chain_id, first.source_id);
        assert.ok(!Number.isNaN(Date.parse(turn.timestamp)));
      }
    });

    test("GetContext: relevant pages follow the chain checks, never a stale cached list", async () => {
      const id = await session(`pages-${name}`);
      // Read first, so that an empty list is what the cache holds when the chain appears.
      assert.deepEqual((await ok(t(), "getContext", { session_id: id })).relevant_pages, []);
      await ok(t(), "storeInteraction", {
        session_id: id,
        user_message: "How long should a sourdough starter ferment before baking bread?",
        agent_response: "Feed the sourdough starter and bake when it doubles, about six hours.",
      });
      await eventually("the open chain is a relevant page", async () => {
        const pages = (await ok(t(), "getContext", { session_id: id })).relevant_pages;
        return pages.length === 1 && /sourdough/i.test(pages[0].summary);
      });
      await ok(t(), "storeInteraction", {
        session_id: id,
        user_message: "Which hiking boots are waterproof for a week in Scotland?",
        agent_response: "Leather hiking boots with a membrane keep Scottish bogs out.",
      });
      await eventually("the new topic's chain comes first", async () => {
        const pages = (await ok(t(), "getContext", { session_id: id })).relevant_pages;
        return pages.length === 2 && /boots/i.test(pages[0].summary);
      });
    });

    test("SearchMemory: facts about entities the query names come from the long-term graph", async () => {
      const id = await session("graph-user");
      await ok(t(), "storeInteraction", {
        session_id: id,
        user_message: "Alice Johnson works at Acme Corp in Berlin with Bob Miller.",
        agent_response: "Noted: Alice Johnson and Bob Miller work at Acme Corp.",
      });
      // A different topic closes the first chain, which can then be promoted.
      await ok(t(), "storeInteraction", {
        session_id: id,
        user_message: "What is a good recipe for tomato soup tonight?",
      });
      let results: Json[] = [];
      await eventually("the entity fact is found", async () => {
        await ok(t(), "triggerGraphAnalytics");
        results = (
          await ok(t(), "searchMemory", { session_id: id, query: "Where does Alice Johnson work?" })
        ).results;
        return results.some((r) => r.source_type === "entity");
      });
      const fact = results.find((r) => r.source_type === "entity");
      assert.match(fact.content, /Alice Johnson/);
      assert.match(fact.content, /Acme Corp|Bob Miller/);
      assert.match(fact.source_id, UUID);
      assert.ok(fact.similarity_score > 0 && fact.similarity_score <= 1);
    });

    test("HealthCheck: healthy, per store", async () => {
      const health = await ok(t(), "healthCheck");
      assert.equal(health.status, "healthy");
      assert.deepEqual(health.dependencies, { cache: "healthy", database: "healthy" });
      assert.ok(health.timestamp);
    });

    test("TriggerGraphAnalytics returns at once with success", async () => {
      const r = await ok(t(), "triggerGraphAnalytics");
      assert.equal(r.success, true);
      assert.match(r.message, /started/);
    });

    test("Planned operations answer Unimplemented", async () => {
      const id = await session("planned-user");
      for (const method of [
        "getSession",
        "deleteSession",
        "analyzeTopics",
        "getHeatMetrics",
        "getSegments",
      ] as const) {
        expectError(await t().call(method, { session_id: id }), "Unimplemented");
      }
    });
  });
}

test("GET /health and /metrics outside the API", async () => {
  const health = await fetch(`${svc.service.urls.rest}/health`);
  assert.equal(health.status, 200);
  assert.equal(((await health.json()) as { status: string }).status, "healthy");
  const metrics = await fetch(`${svc.service.urls.rest}/metrics`);
  assert.equal(metrics.status, 200);
});

test("an independent gRPC client (grpc-js over the .proto) stores and reads back", async () => {
  const root = fileURLToPath(new URL("../", import.meta.url));
  const definition = protoLoader.loadSync("memory/v1/memory.proto", {
    includeDirs: [join(root, "proto"), join(root, "node_modules/google-proto-files")],
    keepCase: true,
  });
  const loaded = grpc.loadPackageDefinition(definition) as unknown as {
    memory: { v1: { MemoryService: grpc.ServiceClientConstructor } };
  };
  const client = new loaded.memory.v1.MemoryService(
    new URL(svc.service.urls.grpc as string).host,
    grpc.credentials.createInsecure(),
  ) as unknown as grpc.Client &
    Record<
      string,
      (request: object, callback: (e: grpc.ServiceError | null, r: Json) => void) => void
    >;
  const call = (method: string, request: object) =>
    new Promise<{ error: grpc.ServiceError | null; response: Json }>((resolve) =>
      client[method](request, (error, response) => resolve({ error, response })),
    );
  try {
    const created = await call("CreateSession", { tenant_id: "grpc-js", user_id: "u" });
    assert.equal(created.error, null);
    const sessionId = created.response.session_id;
    assert.equal(
      (await call("StoreInteraction", { session_id: sessionId, user_message: "hi from grpc-js" }))
        .error,
      null,
    );
    const context = await call("GetContext", { session_id: sessionId });
    assert.equal(context.response.stm_events[0].content, "hi from grpc-js");
    assert.equal(context.response.ltpm.status, "not_implemented");
    const bad = await call("StoreEvent", { session_id: sessionId, type: "dream" });
    assert.equal(bad.error?.code, grpc.status.INVALID_ARGUMENT);
    const missing = await call("GetContext", {
      session_id: "00000000-0000-4000-8000-000000000000",
    });
    assert.equal(missing.error?.code, grpc.status.NOT_FOUND);
  } finally {
    client.close();
  }
});
