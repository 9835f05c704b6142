import type { Sql } from "@atrium/kit";
import { type Embedder, embedOne } from "../embeddings/embedder.js";
import { cosineSimilarity } from "../embeddings/vectors.js";
import { chainStore } from "../store/chains.js";
import type { LexicalSearch } from "../store/lexical-search.js";
import { type Turn, turnStore } from "../store/turns.js";
import type { VectorSearch } from "../store/vector-search.js";
import { quoteTurns } from "./quote-turns.js";

export interface RetrievalQuery {
  tenantId: string;
  userId: string;
  /** Restricts to one agent's memory; absent: every agent of the user. */
  agentId?: string;
  text: string;
  /** Pages to return at most. */
  limit: number;
  /** Metadata equality filter: every pair must match. */
  filter?: Record<string, string>;
}

/** One result: a dialogue page quoting its turns that matched. */
export interface RetrievedPage {
  /** `dialogue_page` (sourceId is the chain) or, for turns not chained yet, `message`. */
  sourceType: "dialogue_page" | "message";
  sourceId: string;
  content: string;
  /**
   * 0–1, higher is closer, descending down the list. The first page carries the best absolute
   * relevance among the results (of a quoted turn: the larger of the share of the query's IDF
   * mass it contains and its cosine similarity to the query), so a caller can hold it to a floor;
   * the others carry that value scaled by their fused score relative to the first's.
   */
  score: number;
  /** When the page's best-matching turn was said. */
  timestamp: Date;
}

export type SearchMode = "hybrid" | "vector";

export interface Retrieval {
  readonly mode: SearchMode;
  search(query: RetrievalQuery): Promise<RetrievedPage[]>;
}

export interface RetrievalOptions {
  sql: Sql;
  embedder: Embedder;
  vectorSearch: VectorSearch;
  lexical: LexicalSearch;
  /** `hybrid` (default) or `vector`: the first release's chain-summary vector search. */
  mode?: SearchMode;
}

/** Reciprocal rank fusion's constant (Cormack et al. 2009): flattens the head of each list. */
const RRF_K = 60;
/** Chain lists rank pages, not turns: they lift a turn's score at half the weight of its own. */
const CHAIN_WEIGHT = 0.5;
const MIN_TURN_CANDIDATES = 50;
const CHAIN_CANDIDATES = 20;
/** Chains whose turns are ranked by vector as well: the best few of each chain list. */
const EXPANDED_VECTOR_CHAINS = 5;
const EXPANDED_LEXICAL_CHAINS = 3;
/** Bounds the embedding work per search (hash embeddings: ~60 µs a turn). */
const MAX_EMBEDDED_TURNS = 300;
const MAX_TURNS_PER_PAGE = 3;

const rrf = (rank: number | undefined) => (rank === undefined ? 0 : 1 / (RRF_K + rank + 1));

interface Candidate {
  turn: Turn;
  chainId?: string;
  lexicalRank?: number;
  coverage: number;
  cosine: number;
  vectorRank?: number;
  score: number;
}

function createVectorRetrieval(options: RetrievalOptions): Retrieval {
  const { sql, embedder, vectorSearch } = options;
  return {
    mode: "vector",
    async search(query) {
      const hits = await vectorSearch.search({
        ...query,
        embedding: await embedOne(embedder, query.text),
      });
      const chains = await chainStore.byIds(
        sql,
        hits.map((h) => h.chainId),
      );
      const similarity = new Map(hits.map((h) => [h.chainId, h.similarity]));
      return chains.map((c) => ({
        sourceType: "dialogue_page",
        sourceId: c.id,
        content: c.summary,
        score: similarity.get(c.id) ?? 0,
        timestamp: c.lastEventAt,
      }));
    },
  };
}

/**
 * Hybrid retrieval: BM25 over the user's messages and over the chains' summaries (lexical), and
 * cosine over the chains and over the turns of the best chains (vector), fused per turn with
 * reciprocal rank fusion. The best turns are grouped into their dialogue pages, each quoting
 * what matched with speaker and time.
 */
export function createRetrieval(options: RetrievalOptions): Retrieval {
  if (options.mode === "vector") return createVectorRetrieval(options);
  const { sql, embedder, vectorSearch, lexical } = options;
  return {
    mode: "hybrid",
    async search(query) {
      const owner = { tenantId: query.tenantId, userId: query.userId };
      const [terms, queryVector] = await Promise.all([
        lexical.terms(query),
        embedOne(embedder, query.text),
      ]);
      const [lexicalTurns, lexicalChains, vectorChains] = await Promise.all([
        lexical.turns({ ...query, limit: Math.max(MIN_TURN_CANDIDATES, query.limit * 3) }, terms),
        lexical.chains({ ...query, limit: CHAIN_CANDIDATES }, terms),
        vectorSearch.search({ ...query, embedding: queryVector, limit: CHAIN_CANDIDATES }),
      ]);
      const expanded = [
        ...new Set([
          ...vectorChains.slice(0, EXPANDED_VECTOR_CHAINS).map((h) => h.chainId),
          ...lexicalChains.slice(0, EXPANDED_LEXICAL_CHAINS).map((c) => c.chainId),
        ]),
      ];
      const [chainOf, chainTurns] = await Promise.all([
        turnStore.chainsOf(
          sql,
          owner,
          lexicalTurns.map((t) => t.eventId),
        ),
        turnStore.ofChains(sql, owner, expanded),
      ]);

      const candidates = new Map<string, Candidate>();
      lexicalTurns.forEach((t, rank) => {
        candidates.set(t.eventId, {
          turn: t,
          chainId: chainOf.get(t.eventId),
          lexicalRank: rank,
          coverage: t.coverage,
          cosine: 0,
          score: 0,
        });
      });
      for (const chainId of expanded) {
        for (const turn of chainTurns.get(chainId) ?? []) {
          const known = candidates.get(turn.eventId);
          if (known) known.chainId = chainId;
          else candidates.set(turn.eventId, { turn, chainId, coverage: 0, cosine: 0, score: 0 });
        }
      }

      const embedded = [...candidates.values()].slice(0, MAX_EMBEDDED_TURNS);
      const vectors = await embedder.embed(embedded.map((c) => c.turn.content));
      embedded.forEach((c, i) => {
        c.cosine = Math.max(0, cosineSimilarity(queryVector, vectors[i]));
      });
      embedded
        .filter((c) => c.cosine > 0)
        .sort((a, b) => b.cosine - a.cosine)
        .forEach((c, rank) => {
          c.vectorRank = rank;
        });

      const vectorChainRank = new Map(vectorChains.map((h, rank) => [h.chainId, rank]));
      const lexicalChainRank = new Map(lexicalChains.map((c, rank) => [c.chainId, rank]));
      for (const c of candidates.values()) {
        const chain = c.chainId;
        c.score =
          rrf(c.lexicalRank) +
          rrf(c.vectorRank) +
          (chain === undefined
            ? 0
            : CHAIN_WEIGHT * (rrf(vectorChainRank.get(chain)) + rrf(lexicalChainRank.get(chain))));
      }
      const ranked = [...candidates.values()]
        .filter((c) => c.score > 0)
        .sort(
          (a, b) => b.score - a.score || b.turn.occurredAt.getTime() - a.turn.occurredAt.getTime(),
        );
      return pagesOf(
        ranked,
        query.limit,
        terms.terms.map((t) => t.lexeme),
      );
    },
  };
}

/**
 * Groups ranked turns into pages, in the order their best turns rank, until a turn would open
 * page `limit + 1`; each page quotes its best few turns.
 */
function pagesOf(ranked: Candidate[], limit: number, lexemes: string[]): RetrievedPage[] {
  const pages = new Map<string, Candidate[]>();
  for (const candidate of ranked) {
    const key = candidate.chainId ?? `message:${candidate.turn.eventId}`;
    const page = pages.get(key);
    if (page) {
      if (page.length < MAX_TURNS_PER_PAGE) page.push(candidate);
      continue;
    }
    if (pages.size === limit) break;
    pages.set(key, [candidate]);
  }
  const grouped = [...pages.values()];
  const relevance = (turns: Candidate[]) =>
    Math.max(...turns.map((c) => Math.max(c.coverage, c.cosine)));
  const best = Math.max(0, ...grouped.map(relevance));
  const top = grouped[0]?.[0].score ?? 1;
  return grouped.map((turns) => {
    const first = turns[0];
    return {
      sourceType: first.chainId ? "dialogue_page" : "message",
      sourceId: first.chainId ?? first.turn.eventId,
      content: quoteTurns(turns.map((c) => ({ turn: c.turn, lexemes }))),
      score: (best * first.score) / top,
      timestamp: first.turn.occurredAt,
    };
  });
}
