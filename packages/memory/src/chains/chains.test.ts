import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Llm } from "../llm/llm.js";
import { createOpenAiLlm } from "../llm/llm.js";
import { chatAnswer, type FakeOpenAi, startFakeOpenAi } from "../testing/fake-openai.js";
import { createChainAnalyser } from "./analyse-chain.js";
import { createContinuityJudge } from "./continuity.js";
import { findMergeTarget, heat, PROMOTE_HEAT, recordAccess, shouldArchive } from "./heat.js";
import { extractEntities, extractiveSummary, keywordTopic } from "./text-analysis.js";
import { inlineTextAnalysis } from "./text-analysis-pool.js";

describe("text analysis without an LLM", () => {
  test("entities by compromise: people, places, organisations, possessives stripped", () => {
    const entities = extractEntities(
      "Alice met Bob Smith at Acme Corp in Paris. Alice's project uses PostgreSQL.",
    );
    const byName = new Map(entities.map((e) => [e.name, e.type]));
    assert.equal(byName.get("Alice"), "person");
    assert.equal(byName.get("Bob Smith"), "person");
    assert.equal(byName.get("Acme Corp"), "organization");
    assert.equal(byName.get("Paris"), "place");
    assert.ok(!entities.some((e) => e.name.includes("'")));
  });

  test("keyword topic and an extractive summary made of the text's own sentences", () => {
    const text =
      "My garden tomatoes are splitting. The tomatoes get too much water after rain. Nice weather today. Should I water the tomatoes less?";
    assert.match(keywordTopic(text), /^tomatoes/);
    // The speaker labels of chain text are not topic words.
    assert.equal(
      keywordTopic(
        "User: How long should sourdough ferment?\nAgent: Sourdough ferments overnight.",
      ),
      "sourdough, long, ferment",
    );
    // Contractions leave no fragments ("ll", "don", "ve") among the topic words.
    assert.equal(
      keywordTopic(
        "User: I'm allergic to peanuts, don't forget.\nAgent: I'll keep the peanut allergy in mind; I've noted it. You won't get peanuts.",
      ),
      "peanuts, allergic, forget",
    );
    const summary = extractiveSummary(text, 120);
    assert.ok(summary.length <= 120);
    for (const sentence of summary.split(/(?<=[.?!])\s+/)) assert.ok(text.includes(sentence));
    assert.match(summary, /tomatoes/);
  });

  test("the analyser falls back to extractive analysis with no LLM", async () => {
    const analysis = await createChainAnalyser().analyse(
      "Alice works at Acme Corp in Berlin since 2021.",
    );
    assert.equal(analysis.method, "extractive");
    assert.ok(analysis.entities.length >= 2);
    assert.ok(analysis.relations.some((r) => r.relation === "mentioned_with"));
    assert.ok(analysis.importance > 0.4 && analysis.importance <= 1);
    assert.ok(analysis.density > 0 && analysis.density <= 1);
  });

  test("a merge without an LLM combines both chains' analyses and tags nothing again", async () => {
    let tagged = 0;
    const textAnalysis = {
      ...inlineTextAnalysis,
      analyse: async (text: string) => {
        tagged++;
        return inlineTextAnalysis.analyse(text);
      },
    };
    const analyser = createChainAnalyser({ textAnalysis });
    const earlier =
      "User: Alice moved to Berlin for the tomato farm.\nAgent: Berlin has good tomato farms.";
    const added = "User: Bob bought tomato seeds in Paris.\nAgent: Tomato seeds from Paris, nice.";
    const into = await analyser.analyse(earlier);
    const part = await analyser.analyse(added);
    const merged = await analyser.merge(into, part, `${earlier}\n${added}`);
    assert.equal(tagged, 2, "the merged text was not tagged");
    const names = merged.entities.map((e) => e.name);
    for (const name of ["Alice", "Berlin", "Bob", "Paris"]) assert.ok(names.includes(name), name);
    assert.equal(new Set(names.map((n) => n.toLowerCase())).size, names.length);
    assert.ok(merged.relations.some((r) => r.subject === "Bob" || r.object === "Bob"));
    assert.match(merged.summary, /Alice/);
    assert.match(merged.summary, /Bob/);
    assert.match(merged.topic, /^tomato/);
    assert.equal(merged.method, "extractive");
    assert.ok(merged.density > 0 && merged.density <= 1);
  });
});

describe("with an LLM on a loopback OpenAI-compatible server", () => {
  let server: FakeOpenAi;
  let llm: Llm;
  before(async () => {
    server = await startFakeOpenAi();
    llm = createOpenAiLlm({ baseUrl: server.baseUrl, model: "m", backoffMs: 1, retries: 0 });
  });
  after(() => server.close());

  test("analysis comes from the structured answer, clamped and typed", async () => {
    server.script(
      "/v1/chat/completions",
      chatAnswer({
        summary: "Alice joined Acme.",
        topic: "career",
        importance: 3,
        entities: [
          { name: "Alice", type: "person" },
          { name: "Acme", type: "company" },
        ],
        relations: [{ subject: "Alice", relation: "works_at", object: "Acme", confidence: 0.9 }],
      }),
    );
    const analysis = await createChainAnalyser({ llm }).analyse("Alice: I joined Acme last week.");
    assert.equal(analysis.method, "llm");
    assert.equal(analysis.summary, "Alice joined Acme.");
    assert.equal(analysis.importance, 1);
    assert.deepEqual(analysis.entities[1], { name: "Acme", type: "thing" });
    assert.equal(analysis.relations[0].relation, "works_at");
    const format = server.requests.at(-1)?.body.response_format as {
      json_schema: { name: string };
    };
    assert.equal(format.json_schema.name, "chain_analysis");
  });

  test("a merge with an LLM is the LLM's analysis of the joined text", async () => {
    server.script(
      "/v1/chat/completions",
      chatAnswer({
        summary: "Alice and Bob grow tomatoes.",
        topic: "tomatoes",
        importance: 0.6,
        entities: [],
        relations: [],
      }),
    );
    const part = await createChainAnalyser().analyse("Bob grows tomatoes.");
    const merged = await createChainAnalyser({ llm }).merge(
      { ...part, summary: "Alice grows tomatoes." },
      part,
      "User: Alice grows tomatoes.\nUser: Bob grows tomatoes.",
    );
    assert.equal(merged.summary, "Alice and Bob grow tomatoes.");
    assert.match(JSON.stringify(server.requests.at(-1)?.body), /Alice grows tomatoes.*Bob grows/);
  });

  test("a failing LLM falls back to extractive analysis and reports the error", async () => {
    server.script("/v1/chat/completions", { status: 500, body: {} });
    const errors: unknown[] = [];
    const analysis = await createChainAnalyser({ llm, onLlmError: (e) => errors.push(e) }).analyse(
      "Bob lives in Rome.",
    );
    assert.equal(analysis.method, "extractive");
    assert.equal(errors.length, 1);
  });

  test("continuity: grey zone asks the LLM; clear zones and workflows do not", async () => {
    const judge = createContinuityJudge({ llm });
    const base = { gapMs: 0, sameWorkflow: false, chainText: "about cats", message: "and dogs?" };
    const before = server.requests.length;
    assert.equal(await judge({ ...base, similarity: 0.9 }), "continue");
    assert.equal(await judge({ ...base, similarity: 0.1 }), "break");
    assert.equal(await judge({ ...base, similarity: 0.1, sameWorkflow: true }), "continue");
    assert.equal(server.requests.length, before);
    server.script(
      "/v1/chat/completions",
      chatAnswer({ same_topic: false }),
      chatAnswer({ same_topic: true }),
    );
    assert.equal(await judge({ ...base, similarity: 0.6 }), "break");
    assert.equal(await judge({ ...base, similarity: 0.6 }), "continue");
    assert.equal(server.requests.length, before + 2);
  });

  test("the LLM reads a long chain and a long message by their budgets", async () => {
    server.script(
      "/v1/chat/completions",
      chatAnswer({ same_topic: true }),
      chatAnswer({
        summary: "A long log.",
        topic: "logs",
        importance: 0.5,
        entities: [],
        relations: [],
      }),
    );
    const long = "error at line 7 ".repeat(100_000);
    await createContinuityJudge({ llm })({
      similarity: 0.6,
      gapMs: 0,
      sameWorkflow: false,
      chainText: `User: ${long}`,
      message: long,
    });
    await createChainAnalyser({ llm }).analyse(`User: ${long}\nAgent: noted`);
    const [judged, analysed] = server.requests.slice(-2).map((r) => JSON.stringify(r.body).length);
    assert.ok(judged < 8000, `the continuity question was ${judged} characters`);
    assert.ok(analysed < 8000, `the analysis request was ${analysed} characters`);
  });
});

test("continuity without an LLM: the grey zone breaks only after a time gap", async () => {
  const judge = createContinuityJudge({ maxGapMs: 60_000 });
  const base = { sameWorkflow: false, chainText: "", message: "", similarity: 0.6 };
  assert.equal(await judge({ ...base, gapMs: 1000 }), "continue");
  assert.equal(await judge({ ...base, gapMs: 120_000 }), "break");
  assert.equal(await judge({ ...base, similarity: 0.72, gapMs: 1e9 }), "continue");
  assert.equal(await judge({ ...base, similarity: 0.5199, gapMs: 0 }), "break");
});

describe("heat", () => {
  const now = new Date("2026-01-10T00:00:00Z");
  const fresh = {
    importance: 0.5,
    density: 0.5,
    recallStrength: 1,
    lastAccessAt: now,
    lastStrengthenedAt: null,
  };

  test("heat = (0.7·importance + 0.3·density) · exp(−Δt_h / (24·S))", () => {
    assert.equal(heat(fresh, now), 0.5);
    const dayLater = new Date(now.getTime() + 24 * 3600_000);
    assert.ok(Math.abs(heat(fresh, dayLater) - 0.5 * Math.exp(-1)) < 1e-12);
    assert.ok(
      Math.abs(heat({ ...fresh, recallStrength: 2 }, dayLater) - 0.5 * Math.exp(-0.5)) < 1e-12,
    );
  });

  test("recall strength grows ×1.5 at most once per 12 hours", () => {
    const once = recordAccess(fresh, now);
    assert.equal(once.recallStrength, 1.5);
    const again = recordAccess(once, new Date(now.getTime() + 3600_000));
    assert.equal(again.recallStrength, 1.5);
    assert.equal(again.lastAccessAt.getTime(), now.getTime() + 3600_000);
    assert.equal(recordAccess(once, new Date(now.getTime() + 12 * 3600_000)).recallStrength, 2.25);
  });

  test("promote at heat ≥ 0.3; archive when idle > 7 days and heat < 0.1", () => {
    // The promoter's rule: heat at or over PROMOTE_HEAT.
    assert.equal(PROMOTE_HEAT, 0.3);
    assert.ok(heat(fresh, now) >= PROMOTE_HEAT);
    assert.ok(heat({ ...fresh, importance: 0.2, density: 0.2 }, now) < PROMOTE_HEAT);
    const eightDays = new Date(now.getTime() + 8 * 24 * 3600_000);
    assert.ok(shouldArchive(fresh, eightDays));
    assert.ok(!shouldArchive(fresh, new Date(now.getTime() + 6 * 24 * 3600_000)));
    assert.ok(!shouldArchive({ ...fresh, recallStrength: 1000 }, eightDays));
  });

  test("merge target only at similarity ≥ 0.85", () => {
    assert.equal(findMergeTarget([{ similarity: 0.84 }]), undefined);
    assert.deepEqual(findMergeTarget([{ similarity: 0.85 }, { similarity: 0.9 }]), {
      similarity: 0.9,
    });
  });
});
