// Search over long turns, as a chat assistant's replies are (hundreds of words each): 50
// sessions of 10 exchanges stored with StoreEvent, a message of 300 characters from the user and
// a reply of 2,500 from the agent each, beside the same with 100-character replies (the same-run
// reference), on the embedded default (PGlite) and on PostgreSQL + Redis when they answer.
// Prints how long the stores took, SearchMemory's latency over 30 of the generated set's
// questions asked at once (the chain checks still taking the messages in), how long the checks
// took, then the latency over 100 questions asked twice once they are done (the second time the
// candidate turns are ones the search met before). The text is the generated recall set's, run
// together; latency is what is measured here, not recall.
//
//   node --conditions=atrium-source --import tsx bench/memory/long-turns.ts
import { mkdirSync, writeFileSync } from "node:fs";
import { createTestPostgres, redisUrl, serverAvailable } from "@atrium/kit/testing";
import { startTestService } from "../../test/memory-service-harness.js";
import { percentile, round } from "../lib/load.js";
import { postJson } from "../lib/post-json.js";
import { chainHolds } from "./chain-checks.js";
import { generateDataset } from "./recall/dataset.js";

const SESSIONS = 50;
const EXCHANGES = 10;
const QUESTION_CHARS = 300;
const QUESTIONS = 100;
/** Questions asked right after the stores, while the chain checks take the messages in. */
const DURING_CHECKS = 30;

const dataset = generateDataset();
let next = 0;
/** The generated turns run together, `chars` long at least. */
function text(chars: number): string {
  let out = "";
  while (out.length < chars) out += `${dataset.turns[next++ % dataset.turns.length].text} `;
  return out.trim();
}

interface Row {
  storage: string;
  replyChars: number;
  storeSeconds: number;
  duringP50Ms: number;
  duringP95Ms: number;
  checksSeconds: number;
  firstP50Ms: number;
  firstP95Ms: number;
  againP50Ms: number;
  againP95Ms: number;
}

async function measure(
  storage: string,
  env: Record<string, string>,
  replyChars: number,
): Promise<Row> {
  const { service, stop } = await startTestService(env);
  try {
    const base = service.urls.rest;
    const started = performance.now();
    const sessions: string[] = [];
    let lastEventId = "";
    const store = async (sessionId: string, role: string, content: string, at: Date) => {
      lastEventId = (
        await postJson<{ event_id: string }>(`${base}/api/v1/sessions/${sessionId}/events`, {
          role,
          type: "message",
          content,
          timestamp: at.toISOString(),
        })
      ).event_id;
    };
    for (let s = 0; s < SESSIONS; s++) {
      const { session_id } = await postJson<{ session_id: string }>(`${base}/api/v1/sessions`, {
        tenant_id: "long-turns",
        user_id: "u",
        agent_id: "assistant",
      });
      sessions.push(session_id);
      for (let i = 0; i < EXCHANGES; i++) {
        await store(
          session_id,
          "user",
          text(QUESTION_CHARS),
          new Date(Date.UTC(2026, 0, 1 + s, 10, 2 * i)),
        );
        await store(
          session_id,
          "agent",
          text(replyChars),
          new Date(Date.UTC(2026, 0, 1 + s, 10, 2 * i + 1)),
        );
      }
    }
    const stored = performance.now();
    const searchSession = sessions.at(-1) as string;
    const questions = dataset.questions.slice(0, QUESTIONS).map((q) => q.text);
    const askAll = async (asked: string[]) => {
      const latencies: number[] = [];
      for (const query of asked) {
        const at = performance.now();
        await postJson(`${base}/api/v1/sessions/${searchSession}/context/search`, {
          query,
          limit: 10,
        });
        latencies.push(performance.now() - at);
      }
      return latencies.sort((a, b) => a - b);
    };
    const duringChecks = await askAll(questions.slice(0, DURING_CHECKS));
    await chainHolds(base, searchSession, lastEventId, 3_600_000);
    const checked = performance.now();
    const first = await askAll(questions);
    const again = await askAll(questions);
    return {
      storage,
      replyChars,
      storeSeconds: round((stored - started) / 1000),
      duringP50Ms: round(percentile(duringChecks, 50)),
      duringP95Ms: round(percentile(duringChecks, 95)),
      checksSeconds: round((checked - stored) / 1000),
      firstP50Ms: round(percentile(first, 50)),
      firstP95Ms: round(percentile(first, 95)),
      againP50Ms: round(percentile(again, 50)),
      againP95Ms: round(percentile(again, 95)),
    };
  } finally {
    await stop();
  }
}

const rows: Row[] = [];
for (const replyChars of [100, 2500]) {
  rows.push(await measure("embedded (PGlite)", {}, replyChars));
  console.log(rows.at(-1));
}
if ((await serverAvailable("postgres")) && (await serverAvailable("redis"))) {
  for (const replyChars of [100, 2500]) {
    const pg = await createTestPostgres();
    try {
      rows.push(
        await measure(
          "PostgreSQL + Redis",
          { DATABASE_URL: pg.url, REDIS_URL: redisUrl() },
          replyChars,
        ),
      );
      console.log(rows.at(-1));
    } finally {
      await pg.drop();
    }
  }
}
console.log(
  [
    "| storage | reply chars | store s | search while checks run p50 / p95 ms | chain checks s | search p50 / p95 ms | asked again p50 / p95 ms |",
    "|---|---|---|---|---|---|---|",
    ...rows.map(
      (r) =>
        `| ${r.storage} | ${r.replyChars} | ${r.storeSeconds} | ${r.duringP50Ms} / ${r.duringP95Ms} | ${r.checksSeconds} | ${r.firstP50Ms} / ${r.firstP95Ms} | ${r.againP50Ms} / ${r.againP95Ms} |`,
    ),
  ].join("\n"),
);
const dir = new URL("../results/", import.meta.url);
mkdirSync(dir, { recursive: true });
writeFileSync(
  new URL("memory-long-turns.json", dir),
  `${JSON.stringify({ at: new Date().toISOString(), rows }, null, 2)}\n`,
);
