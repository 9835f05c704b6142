import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import type { ChatMessage, Llm } from "../llm/llm.js";
import { createChainAnalyser } from "./analyse-chain.js";
import { createContinuityJudge } from "./continuity.js";
import { createFairQueue } from "./fair-queue.js";

/** A slow LLM that records whose text it was asked about, in the order it was asked. */
function stubLlm(callMs: number) {
  const asked: string[] = [];
  let running = 0;
  let most = 0;
  const llm: Llm = {
    model: "stub",
    async completeJson(messages: ChatMessage[]) {
      asked.push(String(messages.at(-1)?.content).match(/tenant-\w/)?.[0] ?? "?");
      running++;
      most = Math.max(most, running);
      await sleep(callMs);
      running--;
      return messages[0].content.includes("same_topic")
        ? { same_topic: true }
        : { summary: "A chain.", topic: "chain", importance: 0.5, entities: [], relations: [] };
    },
  };
  return { llm, asked, most: () => most };
}

test("with an LLM, one tenant's backlog of chain analyses does not stall another tenant's", async () => {
  const { llm, asked, most } = stubLlm(20);
  const llmTurns = createFairQueue({ concurrency: 1 });
  const analyser = createChainAnalyser({ llm, llmTurns });
  const judge = createContinuityJudge({ llm, llmTurns });
  const backlog = Array.from({ length: 20 }, (_, i) =>
    analyser.analyse(`User: tenant-a chain ${i}`, "tenant-a"),
  );
  await sleep(5);
  const [b, c] = await Promise.all([
    analyser.analyse("User: tenant-b chain", "tenant-b"),
    judge({
      similarity: 0.6,
      gapMs: 0,
      sameWorkflow: false,
      chainText: "User: tenant-c earlier",
      message: "tenant-c next",
      tenantId: "tenant-c",
    }),
  ]);
  assert.equal(b.method, "llm");
  assert.equal(c, "continue");
  // Each waited behind at most one more call of the backlog's tenant and one of the other's,
  // not behind its 20: first-come-first-served would have put them 21st and 22nd.
  assert.ok(asked.indexOf("tenant-b") <= 3, asked.join(" "));
  assert.ok(asked.indexOf("tenant-c") <= 4, asked.join(" "));
  await Promise.all(backlog);
  assert.equal(asked.length, 22);
  assert.equal(most(), 1, "never more calls in flight than the queue's concurrency");
});

test("without a queue, LLM calls go out at once", async () => {
  const { llm, most } = stubLlm(10);
  const analyser = createChainAnalyser({ llm });
  await Promise.all(
    Array.from({ length: 3 }, (_, i) => analyser.analyse(`User: tenant-a ${i}`, "tenant-a")),
  );
  assert.equal(most(), 3);
});
