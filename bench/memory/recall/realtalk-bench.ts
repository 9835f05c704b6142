// Recall on real conversations: the REALTALK chats (realtalk.ts) stored through the real memory
// service with `make start` defaults (embedded PGlite, GloVe), every turn with its own time, then
// every question asked through SearchMemory with limit 10, beside BM25 over the raw turns in the
// same run. See README.md ("REALTALK").
//
//   nice -n 10 node --conditions=atrium-source --import tsx \
//     bench/memory/recall/realtalk-bench.ts <dir with Chat_*.json> [--data-dir <dir>]
//       [--session-times | --session-dates] [--merged-turns] [--one-role]
//
// `--data-dir` keeps the service's data directory: a second run with the same directory skips
// the ingest (for measuring a ranking change; a change to what is indexed needs a fresh one).
// `--session-times` stores every turn with its session's first time instead of its own, as a
// client that knows only when a session happened does (LoCoMo's harness sends each session's
// date): results then carry one stamp for many lines and a day's order rests on storage order.
// `--session-dates` stamps them with the midnight (UTC) of that day instead, as a client that
// knows only the date does. `--merged-turns` joins each run of one speaker's messages into one
// turn; `--one-role` stores both people as the user. Give each combination its own `--data-dir`.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createLogger } from "@atrium/kit";
import { startMemoryService } from "@atrium/memory";
import { percentile, round } from "../../lib/load.js";
import { postJson } from "../../lib/post-json.js";
import { chainHolds } from "../chain-checks.js";
import { Bm25 } from "./bm25.js";
import {
  loadRealtalk,
  REALTALK_KINDS,
  type RealtalkChat,
  type RealtalkKind,
  type RealtalkQuestion,
  type RealtalkTurn,
  spokenText,
} from "./realtalk.js";
import { normalize } from "./text.js";

const K = 10;
const SETTLE_TIMEOUT_MS = 900_000;
const KINDS = Object.values(REALTALK_KINDS);

/** One result as a program reads it: its content, its score and, when listed, its turns' ids. */
interface Result {
  content: string;
  score: number;
  eventIds?: string[];
}
type Search = (question: RealtalkQuestion) => Promise<Result[]>;

/** From the service's event ids (or quoted lines) back to REALTALK's turn ids. */
interface TurnIndex {
  byEvent: Map<string, string>;
  byChat: Map<string, RealtalkTurn[]>;
}

const SPEAKERS = { user: "User", agent: "Agent" } as const;
const line = (turn: RealtalkTurn) =>
  `[${turn.timestamp.slice(0, 16).replace("T", " ")}] ${SPEAKERS[turn.role]}: ${spokenText(turn)}`;

/**
 * The turns a result quotes. With event ids, exact; otherwise each quoted line
 * (`[2024-01-03 14:05] User: text`, possibly cut to sentences with `…`) is matched to the turn
 * of that minute and role whose text holds the quoted words.
 */
function quotedTurns(index: TurnIndex, chat: string, result: Result): string[] {
  if (result.eventIds)
    return result.eventIds.flatMap((id) => {
      const turn = index.byEvent.get(id);
      return turn ? [turn] : [];
    });
  const turns = index.byChat.get(chat) ?? [];
  const found: string[] = [];
  for (const quoted of result.content.split("\n")) {
    const match = /^\[(\d{4}-\d{2}-\d{2} \d{2}:\d{2})\] (User|Agent): (.*)$/.exec(quoted);
    if (!match) continue;
    const [, minute, speaker, text] = match;
    const pieces = text
      .split("…")
      .map(normalize)
      .filter((p) => p.length > 0);
    const turn = turns.find(
      (t) =>
        t.timestamp.slice(0, 16).replace("T", " ") === minute &&
        SPEAKERS[t.role] === speaker &&
        pieces.every((p) => normalize(spokenText(t)).includes(p)),
    );
    if (turn) found.push(turn.id);
  }
  return found;
}

/** Words that say nothing of an answer, left out when checking that a quote shows it. */
const FUNCTION_WORDS = new Set(
  "the and for are was were did does what when where who how why which that this with about from been has have had their they his her you your she not can could would should will there here some many much more most than then also just like yes because".split(
    " ",
  ),
);
const answerWords = (text: string) =>
  new Set(
    (normalize(text).match(/[\p{L}\p{N}'-]+/gu) ?? []).filter(
      (w) => w.length > 2 && !FUNCTION_WORDS.has(w),
    ),
  );

/**
 * Whether a result lists an evidence turn that says words of the answer (`listed`), and whether
 * that result's text shows all of those words (`shown`). Evidence@10 counts a turn by its id
 * whatever part of it a result quotes; `shown` catches a quote cut short of the answer. Undefined
 * when no evidence turn says a word of the answer (the answer is inferred, not quoted).
 */
function answerOf(
  question: RealtalkQuestion,
  turns: Map<string, RealtalkTurn>,
  results: Result[],
  quoted: string[][],
): { listed: boolean; shown: boolean } | undefined {
  const wanted = answerWords(question.answer);
  let checked: { listed: boolean; shown: boolean } | undefined;
  for (const id of question.evidence) {
    const turn = turns.get(`${question.chat}/${id}`);
    if (!turn) continue;
    const said = [...answerWords(spokenText(turn))].filter((w) => wanted.has(w));
    if (said.length === 0) continue;
    checked ??= { listed: false, shown: false };
    for (let i = 0; i < results.length; i++) {
      if (!quoted[i].includes(id)) continue;
      checked.listed = true;
      const shown = answerWords(results[i].content);
      if (said.every((w) => shown.has(w))) return { listed: true, shown: true };
    }
  }
  return checked;
}

interface Scored {
  questions: number;
  evidence: number;
  /** Of the questions whose evidence says words of the answer, the share a result shows. */
  answerShown: number;
  answerCheckable: number;
  /** Of those questions, the share where a result lists such a turn, shown or not. */
  answerListed: number;
  byKind: Record<RealtalkKind, { questions: number; evidence: number; chars: number }>;
  charsPerQuestion: number;
  p50Ms: number;
  p95Ms: number;
  /** The first result's score, for questions whose first result quotes evidence and the rest. */
  firstHit?: { right: number[]; wrong: number[] };
  misses: string[];
}

async function score(
  chats: RealtalkChat[],
  index: TurnIndex,
  search: Search,
  withScores: boolean,
): Promise<Scored> {
  const latencies: number[] = [];
  const rows: {
    question: RealtalkQuestion;
    found: boolean;
    answer: { listed: boolean; shown: boolean } | undefined;
    chars: number;
  }[] = [];
  // Turn ids (`D3:14`) repeat from chat to chat.
  const turnsById = new Map(
    chats.flatMap((c) => c.turns.map((t) => [`${c.name}/${t.id}`, t] as const)),
  );
  const firstHit = { right: [] as number[], wrong: [] as number[] };
  for (const question of chats.flatMap((c) => c.questions)) {
    const started = performance.now();
    const results = await search(question);
    latencies.push(performance.now() - started);
    const chars = results.reduce((sum, r) => sum + r.content.length, 0);
    const evidence = new Set(question.evidence);
    const quoted = results.map((r) => quotedTurns(index, question.chat, r));
    rows.push({
      question,
      found: quoted.flat().some((id) => evidence.has(id)),
      answer: answerOf(question, turnsById, results, quoted),
      chars,
    });
    if (results.length > 0)
      (quoted[0].some((id) => evidence.has(id)) ? firstHit.right : firstHit.wrong).push(
        results[0].score,
      );
  }
  latencies.sort((a, b) => a - b);
  const share = (of: typeof rows) => of.filter((r) => r.found).length / of.length;
  const meanChars = (of: typeof rows) =>
    Math.round(of.reduce((sum, r) => sum + r.chars, 0) / of.length);
  const byKind = Object.fromEntries(
    KINDS.map((kind) => {
      const of = rows.filter((r) => r.question.kind === kind);
      return [kind, { questions: of.length, evidence: share(of), chars: meanChars(of) }];
    }),
  ) as Scored["byKind"];
  const checkable = rows.flatMap((r) => r.answer ?? []);
  return {
    questions: rows.length,
    evidence: share(rows),
    answerShown: checkable.filter((a) => a.shown).length / checkable.length,
    answerListed: checkable.filter((a) => a.listed).length / checkable.length,
    answerCheckable: checkable.length,
    byKind,
    charsPerQuestion: meanChars(rows),
    p50Ms: round(percentile(latencies, 50)),
    p95Ms: round(percentile(latencies, 95)),
    ...(withScores ? { firstHit } : {}),
    misses: rows.filter((r) => !r.found).map((r) => r.question.id),
  };
}

function baseline(chats: RealtalkChat[]): Search {
  const indexes = new Map(
    chats.map((chat) => [
      chat.name,
      new Bm25(chat.turns.map((turn) => ({ turn, text: spokenText(turn) }))),
    ]),
  );
  return async (question) =>
    (indexes.get(question.chat)?.search(question.text, K) ?? []).map(({ turn }) => ({
      content: line(turn),
      score: 0,
    }));
}

interface Ingested {
  /** The session each chat's questions are asked in. */
  sessions: Record<string, string>;
  /** Event id → REALTALK turn id. */
  events: Record<string, string>;
  /** Each chat's last stored event. */
  lastEvents: Record<string, string>;
}

/**
 * Stores every turn with StoreEvent (its speaker's role, its own time), one service session per
 * REALTALK session, the chats side by side.
 */
async function ingest(base: string, chats: RealtalkChat[]): Promise<Ingested> {
  const ingested: Ingested = { sessions: {}, events: {}, lastEvents: {} };
  await Promise.all(
    chats.map(async (chat) => {
      const sessions = new Map<number, string>();
      let lastEventId = "";
      for (const turn of chat.turns) {
        let sessionId = sessions.get(turn.session);
        if (!sessionId) {
          sessionId = (
            await postJson<{ session_id: string }>(`${base}/api/v1/sessions`, {
              tenant_id: "realtalk",
              user_id: chat.name,
              agent_id: "assistant",
            })
          ).session_id;
          sessions.set(turn.session, sessionId);
        }
        lastEventId = (
          await postJson<{ event_id: string }>(`${base}/api/v1/sessions/${sessionId}/events`, {
            role: turn.role,
            type: "message",
            content: spokenText(turn),
            timestamp: turn.timestamp,
          })
        ).event_id;
        ingested.events[lastEventId] = turn.id;
      }
      const sessionId = [...sessions.values()].at(-1) as string;
      ingested.sessions[chat.name] = sessionId;
      ingested.lastEvents[chat.name] = lastEventId;
    }),
  );
  return ingested;
}

/** Runs `measure` against a memory service holding the chats (ingested, or reused from `--data-dir`). */
async function withService<T>(
  chats: RealtalkChat[],
  keptDataDir: string | undefined,
  measure: (search: Search, events: Record<string, string>) => Promise<T>,
) {
  const dataDir = keptDataDir ?? mkdtempSync(join(tmpdir(), "atrium-realtalk-"));
  mkdirSync(dataDir, { recursive: true });
  const marker = join(dataDir, "realtalk-ingested.json");
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
  try {
    const base = service.urls.rest;
    const started = performance.now();
    const reused = existsSync(marker);
    const ingested: Ingested = reused
      ? JSON.parse(readFileSync(marker, "utf8"))
      : await ingest(base, chats);
    const ingestSeconds = reused ? null : round((performance.now() - started) / 1000);
    if (!reused) writeFileSync(marker, JSON.stringify(ingested));
    if (!ingested.lastEvents)
      throw new Error(
        `${dataDir} was ingested by an older version of this bench: give a new --data-dir`,
      );
    // Questions are asked once every chat is in its chains, as a memory is read after a pause
    // (a kept data directory may hold messages a stopped run left waiting).
    await Promise.all(
      chats.map((chat) =>
        chainHolds(
          base,
          ingested.sessions[chat.name],
          ingested.lastEvents[chat.name],
          SETTLE_TIMEOUT_MS,
        ),
      ),
    );
    const checksSeconds = round((performance.now() - started) / 1000);
    const search: Search = async (question) => {
      const { results } = await postJson<{
        results: { content: string; similarity_score?: number; turns?: { event_id: string }[] }[];
      }>(`${base}/api/v1/sessions/${ingested.sessions[question.chat]}/context/search`, {
        query: question.text,
        limit: K,
      });
      return results.map((r) => ({
        content: r.content,
        score: r.similarity_score ?? 0,
        ...(r.turns ? { eventIds: r.turns.map((t) => t.event_id) } : {}),
      }));
    };
    // One untimed search per chat, so no first-query setup lands in the percentiles.
    for (const chat of chats) await search({ ...chat.questions[0], text: "warm up" });
    return { ingestSeconds, checksSeconds, result: await measure(search, ingested.events) };
  } finally {
    await service.stop();
    if (!keptDataDir) rmSync(dataDir, { recursive: true, force: true });
  }
}

const pct = (x: number) => (Number.isNaN(x) ? "–" : (x * 100).toFixed(1));

/** Quartiles and the chance a right first hit outscores a wrong one (ROC AUC). */
function separation({ right, wrong }: { right: number[]; wrong: number[] }) {
  const q = (xs: number[]) => {
    const sorted = [...xs].sort((a, b) => a - b);
    return [10, 25, 50, 75, 90].map((p) => round(percentile(sorted, p)));
  };
  let wins = 0;
  for (const r of right) for (const w of wrong) wins += r > w ? 1 : r === w ? 0.5 : 0;
  return {
    right: { count: right.length, p10_25_50_75_90: q(right) },
    wrong: { count: wrong.length, p10_25_50_75_90: q(wrong) },
    auc: round(wins / Math.max(1, right.length * wrong.length)),
  };
}

/**
 * The chat with every turn stamped with its session's first time, or with the midnight (UTC)
 * that starts its day when `dateOnly`.
 */
function withSessionTimes(chat: RealtalkChat, dateOnly = false): RealtalkChat {
  const first = new Map<number, string>();
  for (const turn of chat.turns)
    if (!first.has(turn.session))
      first.set(
        turn.session,
        dateOnly ? `${turn.timestamp.slice(0, 10)}T00:00:00Z` : turn.timestamp,
      );
  return {
    ...chat,
    turns: chat.turns.map((turn) => ({ ...turn, timestamp: first.get(turn.session) as string })),
  };
}

/**
 * The chat with both people's turns stored as the user's (each still opening with its speaker's
 * name), as a client that sees no assistant in a conversation between two people does.
 */
function withOneRole(chat: RealtalkChat): RealtalkChat {
  return { ...chat, turns: chat.turns.map((turn) => ({ ...turn, role: "user" as const })) };
}

/**
 * The chat with each run of one speaker's messages in a session joined into one turn (its first
 * message's id and time, the texts one after another), as a client that stores one turn per
 * change of speaker does, and as dialogue datasets written turn by turn are: the speakers then
 * take strict turns, and a turn is longer. Evidence naming any message of a run names the run.
 */
function withMergedTurns(chat: RealtalkChat): RealtalkChat {
  const merged: RealtalkTurn[] = [];
  const mergedId = new Map<string, string>();
  for (const turn of chat.turns) {
    const last = merged.at(-1);
    if (last && last.session === turn.session && last.speaker === turn.speaker) {
      last.text = `${last.text} ${turn.text}`;
      mergedId.set(turn.id, last.id);
      continue;
    }
    merged.push({ ...turn });
    mergedId.set(turn.id, turn.id);
  }
  return {
    ...chat,
    turns: merged,
    questions: chat.questions.map((q) => ({
      ...q,
      evidence: [...new Set(q.evidence.map((id) => mergedId.get(id) ?? id))],
    })),
  };
}

async function main() {
  const args = process.argv.slice(2);
  const keep = args.indexOf("--data-dir");
  const keptDataDir = keep >= 0 ? resolve(args[keep + 1]) : undefined;
  const dataPath = args.find((a, i) => !a.startsWith("--") && (keep < 0 || i !== keep + 1));
  if (!dataPath) {
    console.error(
      "usage: realtalk-bench.ts <dir with REALTALK's Chat_*.json> [--data-dir <service data dir>] [--session-times | --session-dates] [--merged-turns] [--one-role]",
    );
    process.exit(2);
  }
  const loaded = loadRealtalk(resolve(dataPath));
  const merged = args.includes("--merged-turns") ? loaded.map(withMergedTurns) : loaded;
  const timed = args.includes("--session-dates")
    ? merged.map((chat) => withSessionTimes(chat, true))
    : args.includes("--session-times")
      ? merged.map((chat) => withSessionTimes(chat))
      : merged;
  const chats = args.includes("--one-role") ? timed.map(withOneRole) : timed;
  const summary = {
    chats: chats.length,
    turns: chats.reduce((s, c) => s + c.turns.length, 0),
    questions: chats.reduce((s, c) => s + c.questions.length, 0),
    unresolvedQuestions: chats.reduce((s, c) => s + c.unresolved, 0),
    perKind: Object.fromEntries(
      KINDS.map((k) => [k, chats.flatMap((c) => c.questions).filter((q) => q.kind === k).length]),
    ),
  };
  console.log(`REALTALK: ${JSON.stringify(summary)}`);
  const index: TurnIndex = {
    byEvent: new Map(),
    byChat: new Map(chats.map((c) => [c.name, c.turns])),
  };
  const bm25 = await score(chats, index, baseline(chats), false);
  console.log("running the memory service (defaults: PGlite, GloVe, hybrid)");
  const service = await withService(chats, keptDataDir, async (search, events) => {
    for (const [event, turn] of Object.entries(events)) index.byEvent.set(event, turn);
    return score(chats, index, search, true);
  });
  const atrium = service.result;

  const rows = [
    ["BM25 over raw turns", bm25],
    ["Atrium (defaults)", atrium],
  ] as const;
  const lines = [
    `| REALTALK, k = ${K} | evidence@10 % | ${KINDS.map((k) => `${k} (${summary.perKind[k]})`).join(" | ")} | answer shown / listed % (${bm25.answerCheckable}) | chars/question | ${KINDS.map((k) => `chars ${k}`).join(" | ")} | p50 ms | p95 ms |`,
    `|---|---|${KINDS.map(() => "---").join("|")}|---|---|${KINDS.map(() => "---").join("|")}|---|---|`,
    ...rows.map(
      ([name, s]) =>
        `| ${name} | **${pct(s.evidence)}** | ${KINDS.map((k) => pct(s.byKind[k].evidence)).join(" | ")} | ${pct(s.answerShown)} / ${pct(s.answerListed)} | ${s.charsPerQuestion} | ${KINDS.map((k) => s.byKind[k].chars).join(" | ")} | ${s.p50Ms} | ${s.p95Ms} |`,
    ),
  ];
  console.log(`\n${lines.join("\n")}\n`);
  const scores = atrium.firstHit ? separation(atrium.firstHit) : undefined;
  console.log(`first result's similarity_score, right vs wrong: ${JSON.stringify(scores)}`);
  console.log(
    `ingest: ${service.ingestSeconds ?? "reused"} s; every chat in its chains after ${service.checksSeconds} s`,
  );
  const dir = new URL("../../results/", import.meta.url);
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true });
  writeFileSync(
    new URL("memory-recall-realtalk.json", dir),
    `${JSON.stringify(
      {
        at: new Date().toISOString(),
        dataset: summary,
        ingestSeconds: service.ingestSeconds,
        checksSeconds: service.checksSeconds,
        bm25: { ...bm25 },
        atrium: { ...atrium, firstHit: undefined, firstHitScores: scores },
      },
      null,
      2,
    )}\n`,
  );
}

await main();
