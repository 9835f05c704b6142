// Conversation recall: the synthetic multi-session set of dataset.ts (3 users, 24 sessions and
// 768 turns each, 64 questions each) is stored through the real memory service, then every
// question is asked through SearchMemory with limit 5 and with limit 10 (two calls: a ranking may
// depend on the limit). Scored against the evidence turns the generator recorded, next to a
// plain BM25 over the same raw turns. See README.md for the metrics.
//
//   nice -n 10 node --conditions=atrium-source --import tsx bench/memory/recall/recall-bench.ts
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { startTestService } from "../../../test/memory-service-harness.js";
import { percentile, round } from "../../lib/load.js";
import { postJson } from "../../lib/post-json.js";
import { chainHolds } from "../chain-checks.js";
import { Bm25 } from "./bm25.js";
import {
  type Dataset,
  generateDataset,
  KINDS,
  type Kind,
  type Question,
  type Turn,
} from "./dataset.js";
import { answerForms, normalize, quotes } from "./text.js";

const KS = [5, 10];
/** How long the chain checks may take to catch up with the stored turns, per configuration. */
const SETTLE_TIMEOUT_MS = 180_000;

interface Configuration {
  name: string;
  env?: Record<string, string>;
}

const CONFIGURATIONS: Configuration[] = [
  { name: "(a) BM25 over raw turns" },
  {
    name: "(b) hash vectors only",
    env: { EMBEDDINGS_PROVIDER: "hash-v1", MEMORY_SEARCH_MODE: "vector" },
  },
  { name: "(c) hybrid, hash vectors", env: { EMBEDDINGS_PROVIDER: "hash" } },
  { name: "(d) default (hybrid, GloVe vectors)", env: {} },
];

/** A search answers with result contents, best first. */
type Search = (question: Question, k: number) => Promise<string[]>;

interface Scored {
  k: number;
  evidence: number;
  answer: number;
  byKind: Record<Kind, { evidence: number; answer: number }>;
  charsPerQuestion: number;
  p50Ms: number;
  p95Ms: number;
  misses: string[];
}

/** A raw transcript line, as the baseline returns it: time, speaker, the whole turn. */
const transcriptLine = (turn: Turn) =>
  `[${turn.timestamp.slice(0, 16).replace("T", " ")}] ${turn.speaker === "user" ? "User" : "Assistant"}: ${turn.text}`;

async function score(dataset: Dataset, search: Search, k: number): Promise<Scored> {
  const turnText = new Map(dataset.turns.map((t) => [t.id, t.text]));
  const latencies: number[] = [];
  let chars = 0;
  const rows: { question: Question; evidence: number; answer: number }[] = [];
  for (const question of dataset.questions) {
    const started = performance.now();
    const contents = await search(question, k);
    latencies.push(performance.now() - started);
    chars += contents.reduce((sum, c) => sum + c.length, 0);
    const joined = normalize(contents.join("\n"));
    // Multi-hop questions earn a share per evidence turn found; the others have one.
    const found = question.evidence.filter((id) => quotes(joined, turnText.get(id) ?? ""));
    rows.push({
      question,
      evidence: found.length / question.evidence.length,
      answer: answerForms(question.answer).some((form) => joined.includes(normalize(form))) ? 1 : 0,
    });
  }
  latencies.sort((a, b) => a - b);
  const mean = (xs: number[]) =>
    xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : Number.NaN;
  const r3 = (x: number) => Math.round(x * 1000) / 1000;
  const byKind = Object.fromEntries(
    KINDS.map((kind) => {
      const of = rows.filter((r) => r.question.kind === kind);
      return [
        kind,
        {
          evidence: r3(mean(of.map((r) => r.evidence))),
          answer: r3(mean(of.map((r) => r.answer))),
        },
      ];
    }),
  ) as Scored["byKind"];
  return {
    k,
    evidence: r3(mean(rows.map((r) => r.evidence))),
    answer: r3(mean(rows.map((r) => r.answer))),
    byKind,
    charsPerQuestion: Math.round(chars / rows.length),
    p50Ms: round(percentile(latencies, 50)),
    p95Ms: round(percentile(latencies, 95)),
    misses: rows.filter((r) => r.evidence < 1).map((r) => r.question.id),
  };
}

function baseline(dataset: Dataset): Search {
  const indexes = new Map(
    dataset.users.map((user) => [user, new Bm25(dataset.turns.filter((t) => t.userId === user))]),
  );
  return async (question, k) =>
    (indexes.get(question.userId)?.search(question.text, k) ?? []).map(transcriptLine);
}

/**
 * Stores every turn as its own event (each speaker keeps its own time), one service session per
 * conversation session, and waits until the chain checks have taken in each user's last turn.
 */
async function ingest(base: string, dataset: Dataset) {
  const searchSession = new Map<string, string>();
  await Promise.all(
    dataset.users.map(async (user) => {
      const sessions = new Map<number, string>();
      let lastEventId = "";
      for (const turn of dataset.turns.filter((t) => t.userId === user)) {
        let sessionId = sessions.get(turn.session);
        if (!sessionId) {
          sessionId = (
            await postJson<{ session_id: string }>(`${base}/api/v1/sessions`, {
              tenant_id: "bench",
              user_id: user,
              agent_id: "assistant",
            })
          ).session_id;
          sessions.set(turn.session, sessionId);
        }
        lastEventId = (
          await postJson<{ event_id: string }>(`${base}/api/v1/sessions/${sessionId}/events`, {
            role: turn.speaker === "user" ? "user" : "agent",
            type: "message",
            content: turn.text,
            timestamp: turn.timestamp,
          })
        ).event_id;
      }
      const sessionId = [...sessions.values()].at(-1) as string;
      searchSession.set(user, sessionId);
      // The newest chain of the scope is among the recent pages once it holds the last event.
      await chainHolds(base, sessionId, lastEventId, SETTLE_TIMEOUT_MS);
    }),
  );
  return searchSession;
}

async function runService(dataset: Dataset, configuration: Configuration) {
  const { service, stop } = await startTestService(configuration.env);
  try {
    const base = service.urls.rest;
    const started = performance.now();
    const sessions = await ingest(base, dataset);
    const ingestSeconds = round((performance.now() - started) / 1000);
    const search: Search = async (question, k) => {
      const { results } = await postJson<{ results: { content: string }[] }>(
        `${base}/api/v1/sessions/${sessions.get(question.userId)}/context/search`,
        { query: question.text, limit: k },
      );
      return results.map((r) => r.content);
    };
    // One untimed search per user, so no first-query setup lands in the percentiles.
    for (const user of dataset.users)
      await search({ ...dataset.questions[0], userId: user, text: "warm up" }, 1);
    const scores = [];
    for (const k of KS) scores.push(await score(dataset, search, k));
    return { ingestSeconds, scores };
  } finally {
    await stop();
  }
}

const pct = (x: number) => (Number.isNaN(x) ? "–" : `${(x * 100).toFixed(1)}`);

function table(results: { name: string; scores?: Scored[]; error?: string }[]) {
  const lines = [
    "| configuration | k | evidence@k % | single-hop | multi-hop | temporal | passing | answer@k % | chars/question | p50 ms | p95 ms |",
    "|---|---|---|---|---|---|---|---|---|---|---|",
  ];
  for (const result of results) {
    if (!result.scores) {
      lines.push(`| ${result.name} | | failed: ${result.error} | | | | | | | | |`);
      continue;
    }
    for (const s of result.scores)
      lines.push(
        `| ${result.name} | ${s.k} | **${pct(s.evidence)}** | ${KINDS.map((kind) => pct(s.byKind[kind].evidence)).join(" | ")} | ${pct(s.answer)} | ${s.charsPerQuestion} | ${s.p50Ms} | ${s.p95Ms} |`,
      );
  }
  return lines.join("\n");
}

async function main() {
  const dataset = generateDataset();
  const perKind = Object.fromEntries(
    KINDS.map((kind) => [kind, dataset.questions.filter((q) => q.kind === kind).length]),
  );
  const summary = {
    users: dataset.users.length,
    sessionsPerUser:
      new Set(dataset.turns.map((t) => `${t.userId}/${t.session}`)).size / dataset.users.length,
    turns: dataset.turns.length,
    questions: dataset.questions.length,
    questionsPerKind: perKind,
  };
  console.log(`dataset: ${JSON.stringify(summary)}`);
  const results: {
    name: string;
    env?: Record<string, string>;
    ingestSeconds?: number;
    scores?: Scored[];
    error?: string;
  }[] = [];
  for (const configuration of CONFIGURATIONS) {
    const { name, env } = configuration;
    if (!env) {
      const search = baseline(dataset);
      const scores = [];
      for (const k of KS) scores.push(await score(dataset, search, k));
      results.push({ name, scores });
      continue;
    }
    console.log(`running ${name}`);
    try {
      results.push({ name, env, ...(await runService(dataset, configuration)) });
    } catch (error) {
      const message = (error as Error).message.split("\n")[0];
      console.log(`failed: ${message}`);
      results.push({ name, env, error: message });
    }
  }
  console.log(`\n${table(results)}\n`);
  const dir = new URL("../../results/", import.meta.url);
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true });
  writeFileSync(
    new URL("memory-recall.json", dir),
    `${JSON.stringify({ at: new Date().toISOString(), dataset: summary, results }, null, 2)}\n`,
  );
  // A configuration that should have run and did not is a failed benchmark.
  if (results.some((r) => r.error)) process.exitCode = 1;
}

await main();
