import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, beforeEach, describe, test } from "node:test";
import { createPgliteSql, type Sql } from "@atrium/kit";
import { createChainAnalyser } from "../chains/analyse-chain.js";
import { CHAIN_ANALYSIS_CHARS, EMBED_CHARS } from "../chains/analysis-budget.js";
import { createContinuityJudge } from "../chains/continuity.js";
import { inlineTextAnalysis, type TextAnalysis } from "../chains/text-analysis-pool.js";
import type { Scope, StmEvent } from "../domain.js";
import type { Embedder } from "../embeddings/embedder.js";
import { createHashEmbedder } from "../embeddings/hash-embedder.js";
import { createOpenAiEmbedder } from "../embeddings/openai-embedder.js";
import { createOpenAiLlm } from "../llm/llm.js";
import { createEventStore, type EventStore } from "../store/events.js";
import { migrateMemory } from "../store/migrate.js";
import { createSessionStore } from "../store/sessions.js";
import { createVectorSearch, type VectorSearch } from "../store/vector-search.js";
import { testChain } from "../testing/chain-record.js";
import { chatAnswer, type FakeOpenAi, startFakeOpenAi } from "../testing/fake-openai.js";
import { createChainCheckWorker } from "./chain-check-worker.js";
import { createPromoter } from "./promoter.js";

let sql: Sql;
let events: EventStore;
let vectorSearch: VectorSearch;
let fake: FakeOpenAi;
let scopeCounter = 0;

before(async () => {
  sql = await createPgliteSql();
  await migrateMemory(sql);
  events = createEventStore(sql);
  vectorSearch = await createVectorSearch({ sql, dimensions: 384 });
  fake = await startFakeOpenAi();
});
after(async () => {
  await sql.close();
  await fake.close();
});

let scope: Scope;
let sessionId: string;
beforeEach(async () => {
  scope = { tenantId: "t", userId: `u${++scopeCounter}`, agentId: "a" };
  sessionId = (await createSessionStore(sql).create(scope, {})).id;
});

const base = new Date("2026-03-01T10:00:00Z");
const at = (minutes: number) => new Date(base.getTime() + minutes * 60_000);

async function say(
  role: "user" | "agent",
  content: string,
  minute: number,
  metadata: Record<string, string> = {},
) {
  await events.insert({
    sessionId,
    scope,
    role,
    type: "message",
    content,
    metadata,
    timestamp: at(minute),
  });
}

async function chains() {
  const { rows } = await sql.query<{
    id: string;
    status: string;
    summary: string;
    topic: string;
    event_ids: string[];
    analysis_method: string;
    promoted_at: Date | null;
  }>(
    `SELECT id, status, summary, topic, event_ids, analysis_method, promoted_at FROM memory_chains
     WHERE tenant_id = $1 AND user_id = $2 ORDER BY first_event_at, created_at`,
    [scope.tenantId, scope.userId],
  );
  return rows;
}

function hashWorker(now = () => at(0)) {
  const embedder = createHashEmbedder();
  return createChainCheckWorker({
    sql,
    events,
    embedder,
    vectorSearch,
    analyser: createChainAnalyser(),
    judge: createContinuityJudge(),
    now,
  });
}

describe("chain check worker (hash embeddings, no LLM)", () => {
  test("a topic change closes the chain; provenance lists the events", async () => {
    await say("user", "My hiking boots hurt on the mountain trail", 0);
    await say("agent", "Hiking boots need breaking in before a long trail.", 0);
    await say("user", "Should I buy new hiking boots for the mountain trail", 1);
    await say("user", "How do I file the quarterly tax return as a freelancer?", 2);
    await hashWorker().processScope(scope);
    const [first, second] = await chains();
    assert.equal(first.status, "closed");
    assert.equal(first.event_ids.length, 3);
    assert.match(first.summary, /boots/);
    assert.equal(first.analysis_method, "extractive");
    assert.equal(second.status, "open");
    assert.match(second.summary, /tax/);
    assert.equal((await events.pending(scope, 10)).length, 0);
  });

  test("steps of one workflow stay in one chain however unrelated they look", async () => {
    await say("user", "Run the nightly billing export", 0, { workflow_id: "wf-9" });
    await say("user", "Kubernetes pod restarted with exit code 137", 1, { workflow_id: "wf-9" });
    await hashWorker().processScope(scope);
    const rows = await chains();
    assert.equal(rows.length, 1);
    assert.equal(rows[0].event_ids.length, 2);
  });

  test("a chain that repeats an earlier one is merged into it", async () => {
    const text = "I planted tomato seedlings in the greenhouse garden beds";
    await say("user", text, 0);
    await say("user", "What is the capital gains tax on selling shares?", 1);
    await say("user", text, 2);
    await say("user", "Recommend a jazz piano album for a rainy evening", 3);
    await hashWorker().processScope(scope);
    const rows = await chains();
    assert.equal(rows.length, 3, "the repeated tomato chain was merged, not stored twice");
    const tomato = rows.find((r) => /tomato/.test(r.summary));
    assert.equal(tomato?.event_ids.length, 2);
  });

  test("idle open chains are closed by the promoter; hot ones go into the graph", async () => {
    await say("user", "Alice Johnson from Acme Corp will visit Berlin in May with Bob Miller.", 0);
    await say("agent", "Noted that Alice Johnson and Bob Miller travel to Berlin.", 0);
    const worker = hashWorker(() => at(120));
    await worker.processScope(scope);
    const promoter = createPromoter({ sql, worker, vectorSearch, now: () => at(120) });
    const report = await promoter.runCycle();
    assert.ok(report.closed >= 1);
    assert.ok(report.promoted >= 1);
    assert.ok(report.graphsAnalysed >= 1);
    const [chain] = await chains();
    assert.equal(chain.status, "closed");
    assert.ok(chain.promoted_at);
    const { rows } = await sql.query<{
      name: string;
      community: number | null;
      bridge_score: number | null;
    }>(
      "SELECT name, community, bridge_score FROM memory_entities WHERE tenant_id = $1 AND user_id = $2",
      [scope.tenantId, scope.userId],
    );
    const names = rows.map((r) => r.name);
    assert.ok(names.includes("Alice Johnson") && names.includes("Berlin"), names.join(", "));
    assert.ok(rows.every((r) => r.community !== null && r.bridge_score !== null));
    const edges = await sql.query<{ confidence: number; weight: number }>(
      "SELECT confidence, weight FROM memory_edges WHERE tenant_id = $1 AND user_id = $2",
      [scope.tenantId, scope.userId],
    );
    assert.ok(edges.rows.length > 0);
  });

  test("cold chains are not promoted, and are archived after a week idle", async () => {
    await say("user", "ok", 0);
    await say("user", "Explain quantum entanglement with a simple analogy", 1);
    const worker = hashWorker();
    await worker.processScope(scope);
    await sql.query(
      "UPDATE memory_chains SET importance = 0.05, density = 0.05 WHERE tenant_id = $1 AND user_id = $2 AND status = 'closed'",
      [scope.tenantId, scope.userId],
    );
    const later = at(8 * 24 * 60);
    await createPromoter({ sql, worker, vectorSearch, now: () => later }).runCycle();
    const rows = await chains();
    const cold = rows.find((r) => !/quantum/.test(r.summary));
    assert.equal(cold?.promoted_at, null);
    assert.equal(cold?.status, "archived");
    const [embedding] = await createHashEmbedder().embed(["User: ok"]);
    const hits = await vectorSearch.search({ ...scope, embedding, limit: 10 });
    assert.ok(!hits.some((h) => h.chainId === cold?.id), "archived chains leave the index");
  });
});

describe("with OpenAI-compatible embeddings and LLM on loopback", () => {
  test("the LLM judges the grey zone and writes the closed chain's analysis", async () => {
    const hash = createHashEmbedder();
    // Scripted vectors: the two user messages sit in the grey zone (cosine 0.6).
    const vectors: Record<string, number[]> = {
      first: [1, 0, 0],
      second: [0.6, 0.8, 0],
    };
    fake.fallback("/v1/embeddings", (req) => ({
      body: {
        data: (req.body.input as string[]).map((text, index) => ({
          index,
          embedding: vectors[text] ?? [0, 0, 1],
        })),
      },
    }));
    fake.fallback("/v1/chat/completions", (req) => {
      const format = (req.body.response_format as { json_schema: { name: string } }).json_schema
        .name;
      return format === "topic_continuity"
        ? chatAnswer({ same_topic: false })
        : chatAnswer({
            summary: "The user discussed the first thing.",
            topic: "first thing",
            importance: 0.9,
            entities: [{ name: "Zed", type: "person" }],
            relations: [],
          });
    });
    const llm = createOpenAiLlm({ baseUrl: fake.baseUrl, model: "m", retries: 0 });
    const worker = createChainCheckWorker({
      sql,
      events,
      embedder: createOpenAiEmbedder({ baseUrl: fake.baseUrl, model: "e", dimensions: 3 }),
      vectorSearch: await createVectorSearch({ sql, dimensions: 3, mode: "exact" }),
      analyser: createChainAnalyser({ llm }),
      judge: createContinuityJudge({ llm }),
    });
    await say("user", "first", 0);
    await say("user", "second", 1);
    await worker.processScope(scope);
    const [closed, open] = await chains();
    assert.equal(closed.status, "closed");
    assert.equal(closed.analysis_method, "llm");
    assert.equal(closed.summary, "The user discussed the first thing.");
    assert.equal(closed.topic, "first thing");
    assert.equal(open.status, "open");
    const asked = fake.requests.filter((r) => r.path === "/v1/chat/completions");
    assert.ok(asked.some((r) => JSON.stringify(r.body).includes("topic_continuity")));
    assert.ok(hash.dimensions === 384);
  });
});

test("a job past its budget stops at the next message and leaves the rest pending", async () => {
  await say("user", "My hiking boots hurt on the mountain trail", 0);
  await say("agent", "Hiking boots need breaking in before a long trail.", 0);
  await say("user", "Should I buy new hiking boots for the mountain trail", 1);
  const worker = createChainCheckWorker({
    sql,
    events,
    embedder: createHashEmbedder(),
    vectorSearch,
    analyser: createChainAnalyser(),
    judge: createContinuityJudge(),
    jobBudgetMs: 0,
  });
  await worker.processScope(scope);
  assert.equal((await events.pending(scope, 10)).length, 2, "one message per job, at least");
  await worker.processScope(scope);
  await worker.processScope(scope);
  assert.equal((await events.pending(scope, 10)).length, 0);
  assert.equal((await chains())[0].event_ids.length, 3);
});

test("long chains are not merged into one ever longer chain", async () => {
  const long = "I planted tomato seedlings in the greenhouse garden beds. ".repeat(600);
  await say("user", long, 0);
  await say("user", "What is the capital gains tax on selling shares?", 1);
  await say("user", long, 2);
  await say("user", "Recommend a jazz piano album for a rainy evening", 3);
  await hashWorker().processScope(scope);
  const rows = await chains();
  assert.equal(rows.length, 4, "each long tomato chain stays its own");
  assert.ok(rows.every((r) => r.event_ids.length === 1));
});

test("a chain rebuilt after an erasure reads a very large message by its leading part", async () => {
  const hash = createHashEmbedder();
  const embedded: number[] = [];
  const embedder: Embedder = {
    model: hash.model,
    dimensions: hash.dimensions,
    semantic: hash.semantic,
    embed(texts) {
      embedded.push(...texts.map((t) => t.length));
      return hash.embed(texts);
    },
  };
  const analysed: { chars: number; tenantId?: string }[] = [];
  const textAnalysis: TextAnalysis = {
    ...inlineTextAnalysis,
    analyse(text, tenantId) {
      analysed.push({ chars: text.length, tenantId });
      return inlineTextAnalysis.analyse(text, tenantId);
    },
  };
  const worker = createChainCheckWorker({
    sql,
    events,
    embedder,
    vectorSearch,
    analyser: createChainAnalyser({ textAnalysis }),
    judge: createContinuityJudge(),
    textAnalysis,
  });
  // About 5 MB: a pasted log, as issue 28's probe sent (three 2 MB messages).
  const huge = `My garden log. ${"Tomatoes need water every morning before the sun. ".repeat(100_000)}`;
  const said = (role: "user" | "agent", content: string, minute: number): StmEvent => ({
    id: randomUUID(),
    sessionId,
    role,
    type: "message",
    source: role,
    content,
    metadata: {},
    timestamp: at(minute),
    coalescedCount: 1,
  });
  const remaining = [said("user", huge, 0), said("agent", "Noted, watering at dawn.", 1)];
  const started = performance.now();
  const rebuilt = await worker.rebuild(
    testChain(scope, { status: "closed", eventIds: remaining.map((e) => e.id) }),
    remaining,
  );
  const elapsed = performance.now() - started;
  assert.deepEqual(
    rebuilt.eventIds,
    remaining.map((e) => e.id),
  );
  assert.ok(rebuilt.content.includes(huge), "the chain's text stays whole");
  assert.ok(embedded.length >= 2);
  assert.ok(Math.max(...embedded) <= EMBED_CHARS + 1, `embedded ${Math.max(...embedded)} chars`);
  assert.equal(analysed.length, 1);
  assert.ok(analysed[0].chars <= CHAIN_ANALYSIS_CHARS + 1, `analysed ${analysed[0].chars} chars`);
  // Its analysis takes the tenant's turn in the fair queue, as the chain check's does.
  assert.equal(analysed[0].tenantId, scope.tenantId);
  assert.ok(elapsed < 5000, `rebuilt in ${elapsed} ms`);
});
