import type { Sql } from "@atrium/kit";
import { type Json, ok, type Transport } from "./memory-service-harness.js";

/**
 * Read-your-writes, as an agent meets it: a fact stored on one memory instance and asked about
 * at once, in other words, on another. Shared by the end-to-end test (100 pairs) and
 * bench/memory/read-your-writes.ts (1,000).
 */

/** A fact and a question about it that shares none of its content words. */
export interface FactPair {
  fact: string;
  question: string;
}

export const FACT_PAIRS: FactPair[] = [
  {
    fact: "We adopted a puppy from the shelter last spring.",
    question: "What kind of dog do I have?",
  },
  {
    fact: "I work night shifts as a nurse in the cardiology ward.",
    question: "What is my job at the hospital?",
  },
  {
    fact: "My sister moved to Lisbon in March.",
    question: "Which city does my sibling live in now?",
  },
  { fact: "I drive a red Toyota pickup to work.", question: "What car do I own?" },
  {
    fact: "My daughter plays the violin in the school orchestra.",
    question: "Which musical instrument does my child learn?",
  },
  {
    fact: "I am training for the Berlin marathon in September.",
    question: "What race am I running this autumn?",
  },
  {
    fact: "Our wedding anniversary dinner is at an Italian trattoria.",
    question: "Where are we celebrating with my wife?",
  },
  {
    fact: "I cannot eat shellfish because of an allergy.",
    question: "Which seafood makes me sick?",
  },
  {
    fact: "My grandfather grew tomatoes and cucumbers in his garden.",
    question: "What vegetables did grandpa plant?",
  },
  {
    fact: "I studied chemistry at university in Edinburgh.",
    question: "What did I major in at college?",
  },
  { fact: "Our flight to Tokyo leaves on the fourteenth.", question: "When is the trip to Japan?" },
  {
    fact: "I bake sourdough bread every Sunday morning.",
    question: "What do I cook at the weekend?",
  },
  { fact: "My son broke his wrist playing football.", question: "How did the boy injure his arm?" },
  { fact: "I am reading a novel by Haruki Murakami.", question: "Which author's book am I into?" },
  {
    fact: "We painted the kitchen walls a pale blue.",
    question: "What colour is the room where we cook?",
  },
  {
    fact: "My cat Miso sleeps on the radiator all winter.",
    question: "Where does the kitten nap when it is cold?",
  },
  {
    fact: "I switched from coffee to green tea last month.",
    question: "What drink do I have in the mornings now?",
  },
  {
    fact: "My brother is a pilot for a cargo airline.",
    question: "What is my brother's occupation?",
  },
  {
    fact: "I play chess online against strangers most evenings.",
    question: "Which board game is my hobby?",
  },
  {
    fact: "Our apartment has a balcony overlooking the harbour.",
    question: "What view does the flat have?",
  },
  {
    fact: "I bought a secondhand piano for the living room.",
    question: "Which instrument did I purchase?",
  },
  {
    fact: "My mother recovered from knee surgery in June.",
    question: "When did mum have her operation?",
  },
  {
    fact: "I volunteer at the food bank on Thursdays.",
    question: "Where do I help out as charity work?",
  },
  {
    fact: "We keep chickens in the backyard for eggs.",
    question: "Which birds do we raise at home?",
  },
  {
    fact: "I learned to swim only when I was thirty.",
    question: "How old was I when I got into the pool?",
  },
];

/** Unrelated turns each user said earlier, through their chain check before the pairs start. */
export const BACKGROUND: { user_message: string; agent_response: string }[] = [
  {
    user_message: "Can you remind me to renew the passport?",
    agent_response: "I will remind you.",
  },
  {
    user_message: "The printer upstairs keeps jamming on thick paper.",
    agent_response: "Try the manual feed tray.",
  },
  {
    user_message: "Any tips for a job interview presentation?",
    agent_response: "Keep it to ten minutes.",
  },
];

/** One SearchMemory result as compared: what it quotes, which turns, with what score. */
export interface ComparedResult {
  content: string;
  turnIds: string[];
  score: number;
}

export interface PairOutcome {
  pair: FactPair;
  /** The turns quoted by the search made at once, one per line, in order. */
  atOnce: string[];
  /** The same search once every chain check ran. */
  later: string[];
  /** The results of the search made at once and of the same search later. */
  resultsAtOnce: ComparedResult[];
  resultsLater: ComparedResult[];
  /** Whether GetContext's relevant pages quoted the fact at once and later. */
  contextAtOnce: boolean;
  contextLater: boolean;
}

/** The quoted turns of a SearchMemory answer, without their times. */
const quotedTurns = (results: Json[]): string[] =>
  results.flatMap((r: Json) =>
    String(r.content)
      .split("\n")
      .map((line) => line.replace(/^\[[^\]]*\] /, "")),
  );

const pagesQuote = (pages: Json[], fact: string) =>
  pages.some((p: Json) => String(p.summary).includes(fact) || String(p.topic).includes(fact));

/** Runs `task` for 0…count-1, `concurrency` at a time. */
async function inPool(count: number, concurrency: number, task: (i: number) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await task(next++);
    }),
  );
}

/** Waits until the chain checks of every stored message have run. */
async function chainChecksDone(sql: Sql, tenant: string) {
  for (;;) {
    const { rows } = await sql.query<{ n: string }>(
      "SELECT count(*) AS n FROM memory_events WHERE tenant_id = $1 AND chain_state = 'pending'",
      [tenant],
    );
    if (Number(rows[0].n) === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export interface ReadYourWritesOptions {
  /** Where the facts are stored. */
  writer: Transport;
  /** Where they are asked about: another instance. */
  reader: Transport;
  sql: Sql;
  tenant: string;
  pairs: number;
  /** Pairs in flight at once (each on its own user). */
  concurrency?: number;
  /**
   * What each user said before: `short` (default) the three BACKGROUND turns; `long` those and
   * every other fact of FACT_PAIRS, 54 turns in several chains, more than a search ranks as the
   * newest, so that which chains are nearest the question matters.
   */
  history?: "short" | "long";
}

function historyOf(i: number, history: "short" | "long") {
  if (history === "short") return BACKGROUND;
  const own = i % FACT_PAIRS.length;
  return [
    ...BACKGROUND,
    ...FACT_PAIRS.filter((_, j) => j !== own).map((p) => ({
      user_message: p.fact,
      agent_response: "Noted.",
    })),
  ];
}

/**
 * Stores each fact on `writer` and asks `reader` at once (SearchMemory and GetContext with a
 * query), each pair on a user of its own with the background already chained; once every chain
 * check ran, asks the same again.
 */
export async function runReadYourWrites(options: ReadYourWritesOptions): Promise<PairOutcome[]> {
  const { writer, reader, sql, tenant, pairs } = options;
  const concurrency = options.concurrency ?? 4;
  const sessions: string[] = [];
  await inPool(pairs, concurrency, async (i) => {
    const { session_id } = await ok(writer, "createSession", {
      tenant_id: tenant,
      user_id: `user-${i}`,
      agent_id: "assistant",
    });
    for (const turn of historyOf(i, options.history ?? "short")) {
      await ok(writer, "storeInteraction", { session_id, ...turn });
    }
    sessions[i] = session_id;
  });
  await chainChecksDone(sql, tenant);

  const ask = async (session_id: string, pair: FactPair) => {
    const [search, context] = await Promise.all([
      ok(reader, "searchMemory", { session_id, query: pair.question, limit: 5 }),
      ok(reader, "getContext", { session_id, query: pair.question, limit: 1 }),
    ]);
    return {
      turns: quotedTurns(search.results),
      results: search.results.map((r: Json) => ({
        content: String(r.content),
        turnIds: (r.turns ?? []).map((t: Json) => String(t.event_id)),
        score: Number(r.similarity_score),
      })),
      context: pagesQuote(context.relevant_pages, pair.fact),
    };
  };

  const outcomes: PairOutcome[] = [];
  await inPool(pairs, concurrency, async (i) => {
    const pair = FACT_PAIRS[i % FACT_PAIRS.length];
    await ok(writer, "storeInteraction", {
      session_id: sessions[i],
      user_message: pair.fact,
      agent_response: "Noted.",
    });
    const now = await ask(sessions[i], pair);
    outcomes[i] = {
      pair,
      atOnce: now.turns,
      later: [],
      resultsAtOnce: now.results,
      resultsLater: [],
      contextAtOnce: now.context,
      contextLater: false,
    };
  });
  await chainChecksDone(sql, tenant);
  for (let i = 0; i < pairs; i++) {
    const later = await ask(sessions[i], outcomes[i].pair);
    outcomes[i].later = later.turns;
    outcomes[i].resultsLater = later.results;
    outcomes[i].contextLater = later.context;
  }
  return outcomes;
}

/** Whether a search's quoted turns hold the fact. */
export const quotesFact = (turns: string[], pair: FactPair) =>
  turns.some((t) => t.includes(pair.fact));
