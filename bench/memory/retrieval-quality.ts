// Retrieval quality of the memory pipeline with the local `hash` embeddings: the scripted
// conversation set (conversations.ts, 200 turns over 8 sessions) goes in through the real
// service (StoreEvent over REST, chain checks on the queue), then each question asks for the
// five most relevant chains (GetContext ?query=, the same vector ranking SearchMemory uses).
// A question counts as recalled when one of the five chains was built from one of its evidence
// turns (chain provenance: metadata.event_ids). Each fact has a question sharing words with its
// evidence and a paraphrased one. Prints recall@5 and MRR per kind and the chain count, writes
// bench/results/memory-retrieval.json.
//
//   node --conditions=atrium-source --import tsx bench/memory/retrieval-quality.ts
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { createLogger } from "@atrium/kit";
import { startMemoryService } from "@atrium/memory";
import { generateConversations } from "./conversations.js";

async function post(url: string, body: unknown) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${url}: ${response.status} ${await response.text()}`);
  return response.json() as Promise<Record<string, string>>;
}

async function main() {
  const { turns, questions } = generateConversations();
  const dataDir = mkdtempSync(join(tmpdir(), "memory-quality-"));
  const service = await startMemoryService({
    env: {
      MEMORY_HOST: "127.0.0.1",
      MEMORY_REST_PORT: "0",
      MEMORY_GRPC_PORT: "0",
      ATRIUM_DATA_DIR: dataDir,
      MEMORY_PROMOTER_INTERVAL: "0s",
    },
    logger: createLogger({ name: "memory", level: "silent" }),
  });
  const base = service.urls.rest;
  try {
    const evidence = new Map<number, Set<string>>();
    const sessions = new Map<number, string>();
    const start = Date.parse("2026-02-01T09:00:00Z");
    for (const [i, turn] of turns.entries()) {
      let sessionId = sessions.get(turn.session);
      if (!sessionId) {
        sessionId = (
          await post(`${base}/api/v1/sessions`, {
            tenant_id: "quality",
            user_id: "u",
            agent_id: "assistant",
          })
        ).session_id;
        sessions.set(turn.session, sessionId);
      }
      // Sessions a day apart, turns a minute apart.
      const timestamp = new Date(start + turn.session * 86_400_000 + i * 60_000).toISOString();
      const ids = evidence.get(turn.fact) ?? new Set<string>();
      for (const [role, content] of [
        ["user", turn.user],
        ["agent", turn.agent],
      ]) {
        const { event_id } = await post(`${base}/api/v1/sessions/${sessionId}/events`, {
          role,
          type: "message",
          content,
          timestamp,
        });
        ids.add(event_id);
      }
      evidence.set(turn.fact, ids);
    }
    const anySession = sessions.get(0) as string;
    // The chain checks run in the background; wait until the newest turn is in a chain.
    const lastTurn = turns.at(-1)?.user ?? "";
    for (let tries = 0; ; tries++) {
      const r = await fetch(
        `${base}/api/v1/sessions/${anySession}/context?limit=0&query=${encodeURIComponent(lastTurn)}`,
      );
      const pages = (
        (await r.json()) as {
          relevant_pages: { summary: string; metadata: Record<string, string> }[];
        }
      ).relevant_pages;
      const lastIds = evidence.get(turns.at(-1)?.fact ?? -1) ?? new Set();
      if (pages.some((p) => p.metadata.event_ids.split(",").some((id) => lastIds.has(id)))) break;
      if (tries > 600) throw new Error("chain checks did not finish");
      await sleep(200);
    }
    const score = async (kind: "lexical" | "paraphrase") => {
      let hits = 0;
      let reciprocal = 0;
      const asked = questions.filter((q) => q.kind === kind);
      const misses: string[] = [];
      for (const q of asked) {
        const r = await fetch(
          `${base}/api/v1/sessions/${anySession}/context?limit=0&query=${encodeURIComponent(q.text)}`,
        );
        const pages = (
          (await r.json()) as { relevant_pages: { metadata: Record<string, string> }[] }
        ).relevant_pages;
        const ids = evidence.get(q.fact) ?? new Set();
        const rank = pages.findIndex((p) =>
          p.metadata.event_ids.split(",").some((id) => ids.has(id)),
        );
        if (rank >= 0) {
          hits++;
          reciprocal += 1 / (rank + 1);
        } else misses.push(q.text);
      }
      const r3 = (x: number) => Math.round(x * 1000) / 1000;
      return {
        questions: asked.length,
        recallAt5: r3(hits / asked.length),
        mrrAt5: r3(reciprocal / asked.length),
        misses,
      };
    };
    // How the turns were cut into chains: recall means little if a few huge chains hold everything.
    const all = (await post(`${base}/api/v1/sessions/${anySession}/context/search`, {
      query: "my",
      limit: 100,
    })) as unknown as {
      results: { source_type: string }[];
    };
    const chains = all.results.filter((r) => r.source_type === "dialogue_page").length;
    const result = {
      at: new Date().toISOString(),
      embeddings: "hash-384",
      turns: turns.length,
      events: turns.length * 2,
      sessions: sessions.size,
      facts: evidence.size,
      chains,
      lexical: await score("lexical"),
      paraphrase: await score("paraphrase"),
    };
    console.log(JSON.stringify(result, null, 2));
    const dir = new URL("../results/", import.meta.url);
    if (!existsSync(dir)) mkdirSync(dir, { recursive: true });
    writeFileSync(new URL("memory-retrieval.json", dir), `${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await service.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
