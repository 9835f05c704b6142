import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import nlp from "compromise";
import { splitSentences } from "./text-analysis.js";
import { createTextAnalysisPool, inlineTextAnalysis } from "./text-analysis-pool.js";

const text = [
  "User: We moved the Berlin office to Kreuzberg last March. Dr. Jane Roe leads it now.",
  "Agent: Noted: the Berlin office is in Kreuzberg since March, led by Dr. Jane Roe.",
  "User: Acme Corp pays the rent, about 4,200 euros a month. Is that a lot for 12 people?",
].join("\n");

describe("text analysis on worker threads", () => {
  const pool = createTextAnalysisPool({ threads: 1 });
  after(() => pool.close());

  test("gives exactly what the analysis on the calling thread gives", async () => {
    assert.deepEqual(await pool.analyse(text), await inlineTextAnalysis.analyse(text));
    assert.equal(await pool.summarise(text), await inlineTextAnalysis.summarise(text));
  });

  test("keeps working through many tasks at once", async () => {
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => pool.summarise(`${text}\nUser: question ${i}?`)),
    );
    for (const summary of results) assert.ok(summary.length > 0);
  });

  test("a bad task rejects its own promise and the pool carries on", async () => {
    await assert.rejects(pool.analyse(undefined as unknown as string));
    assert.ok((await pool.analyse(text)).entities.length > 0);
  });
});

test("sentences from compromise's tokenizer alone are those of a full tagged parse", () => {
  assert.deepEqual(
    splitSentences(text),
    (nlp(text).sentences().out("array") as string[]).map((s) => s.trim()),
  );
});

test("a task past its time is stopped: its thread is replaced and the result is degraded", async () => {
  const pool = createTextAnalysisPool({ threads: 1, taskTimeoutMs: 150 });
  try {
    // compromise's tagger needs far longer than the budget for this much text.
    const long = Array.from({ length: 4000 }, (_, i) => `Alice met Bob in Paris on day ${i}.`).join(
      " ",
    );
    // A started thread: its start is not the task's time.
    await pool.summarise(text, "tenant-a");
    const began = performance.now();
    const degraded = await pool.analyse(long, "tenant-a");
    assert.ok(performance.now() - began < 3000, "the caller did not wait for the analysis");
    assert.deepEqual(degraded.entities, []);
    assert.ok(degraded.summary.startsWith("Alice met Bob in Paris on day 0."));
    // The pool goes on with a fresh thread.
    assert.ok((await pool.summarise(text, "tenant-b")).length > 0);
  } finally {
    await pool.close();
  }
});
