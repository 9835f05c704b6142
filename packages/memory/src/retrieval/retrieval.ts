import type { Sql } from "@atrium/kit";
import { type Embedder, embedOne } from "../embeddings/embedder.js";
import { cosineSimilarity } from "../embeddings/vectors.js";
import {
  type Neighbour,
  repliesTo,
  sameSpeakerNeighbours,
  turnsAnswered,
} from "../store/answered-turns.js";
import { chainStore } from "../store/chains.js";
import type { LexicalQuery, LexicalSearch } from "../store/lexical-search.js";
import { type Turn, turnStore } from "../store/turns.js";
import type { VectorSearch } from "../store/vector-search.js";
import { memoryEchoes } from "./memory-echoes.js";
import { focusQuery } from "./query-focus.js";
import { orderOfSaying, type QuotedAs, quoteTurns } from "./quote-turns.js";
import { speakerNamed } from "./speaker-focus.js";
import { turnsOfNamedDays } from "./turns-of-days.js";

/** A user's search: `limit` pages at most, the filter on each message's (or chain's) metadata. */
export type RetrievalQuery = LexicalQuery;

/** A turn a page quotes, as a program reads it. */
export type PageTurn = Turn & {
  /** The dialogue page the turn is in; absent until its chain check has run. */
  chainId?: string;
};

/** One result: a dialogue page quoting its turns that matched. */
export interface RetrievedPage {
  /** `dialogue_page` (sourceId is the chain) or, for turns not chained yet, `message`. */
  sourceType: "dialogue_page" | "message";
  sourceId: string;
  content: string;
  /**
   * The turns `content` quotes, whole, oldest first: those that matched, and before an agent
   * reply the user turn it answers. None in vector mode (a page is its chain's summary).
   */
  turns: PageTurn[];
  /**
   * 0–1, higher is closer, descending down the list. The first page carries the best absolute
   * relevance among the results (of a quoted turn: the larger of the share of the query's IDF
   * mass it contains and its cosine similarity to the query), so a caller can hold it to a floor;
   * the others carry that value scaled by their fused score relative to the first's.
   */
  score: number;
  /** When the page's best-matching turn was said. */
  timestamp: Date;
  /** Present when the search was asked to explain itself (`SearchOptions.explain`). */
  ranks?: RetrievalRanks;
}

/**
 * Why a page ranks where it does: the 1-based places of its best turn (hybrid) or its chain
 * (vector mode) in the lexical (BM25) and the vector (cosine) ranking that were fused; null where
 * that retriever did not find it.
 */
export interface RetrievalRanks {
  lexical: number | null;
  vector: number | null;
}

export interface SearchOptions {
  /** Attach each page's `ranks`, for an operator asking why a page was found. */
  explain?: boolean;
}

export type SearchMode = "hybrid" | "vector";

export interface Retrieval {
  readonly mode: SearchMode;
  search(query: RetrievalQuery, options?: SearchOptions): Promise<RetrievedPage[]>;
}

export interface RetrievalOptions {
  sql: Sql;
  embedder: Embedder;
  vectorSearch: VectorSearch;
  lexical: LexicalSearch;
  /** `hybrid` (default) or `vector`: the first release's chain-summary vector search. */
  mode?: SearchMode;
}

/**
 * Reciprocal rank fusion (Cormack et al. 2009): each list adds weight / (RRF_K + rank). Its
 * constant flattens the head of each list, so no single list decides alone.
 */
const RRF_K = 60;
/**
 * The lists' weights. BM25 over the turns leads. The second, feedback query finds the turn a
 * first hit links to (multi-hop). The chain lists only break ties between turns. The vector
 * side weighs fully with a trained embedder; with the hashing embedders its vectors restate the
 * words BM25 already scored, with more noise, so they mostly reorder (bench/memory/recall).
 */
const LEXICAL_WEIGHT = 1;
const FEEDBACK_WEIGHT = 0.5;
/** The turns said on (or speaking of) a day the question names. */
const DATE_WEIGHT = 1;
/**
 * When a question names a day and turns of that day exist, the others keep this share of their
 * score: the day narrows where the answer is more than any shared word does.
 */
const OFF_DAY_FACTOR = 0.25;
/**
 * When a question names one speaker, the other speaker's turns keep this share of their score:
 * what someone did is in what they said far more often than in what was said to them.
 */
const OTHER_SPEAKER_FACTOR = 0.5;
const CHAIN_WEIGHT = 0.05;
const VECTOR_WEIGHT = { semantic: 1, lexical: 0.2 };
/**
 * What a turn needs to be quoted at all, so that an answer carries what matched and not a
 * padding of near misses: a BM25 score at least this share of the best turn's, a place among
 * the first feedback hits, or a cosine this close to the best turn's.
 */
const MIN_LEXICAL_SHARE = 0.4;
const FEEDBACK_KEPT = 2;
const DATE_KEPT = 3;
const MIN_COSINE_SHARE = { semantic: 0.8, lexical: 1 };
/** Turns whose rarest words seed the feedback query, and how many of those words it takes. */
const FEEDBACK_SOURCES = 2;
const FEEDBACK_TERMS = 4;
const MIN_TURN_CANDIDATES = 50;
const CHAIN_CANDIDATES = 20;
/** Chains whose turns are ranked by vector too: the best of the vector and the lexical list. */
const EXPANDED_VECTOR_CHAINS = 5;
const EXPANDED_LEXICAL_CHAINS = 3;
/** Bounds the embedding work per search (GloVe: ~9 µs a turn of 25 words; hash: ~25 µs). */
const MAX_EMBEDDED_TURNS = 200;
const MAX_TURNS_PER_PAGE = 3;
/**
 * The best turns quoted with their speaker's messages just before and after, said within
 * NEIGHBOUR_SECONDS: people type one thought as several messages, and the words a question shares
 * sit in one of them while what it asks for is in the next.
 */
const NEIGHBOUR_TURNS = 2;
const NEIGHBOUR_SECONDS = 180;
/**
 * The newest turns not in a chain yet that are ranked by vector: a stored turn is found by
 * meaning from its acknowledgement on (read-your-writes), before its chain check writes the page.
 */
const MAX_PENDING_TURNS = 50;

const rrf = (rank: number | undefined) => (rank === undefined ? 0 : 1 / (RRF_K + rank + 1));
const place = (rank: number | undefined) => (rank === undefined ? null : rank + 1);

interface Candidate {
  turn: Turn;
  chainId?: string;
  lexicalRank?: number;
  /** BM25 score as a share of the best turn's. */
  lexicalShare: number;
  feedbackRank?: number;
  dateRank?: number;
  coverage: number;
  cosine: number;
  vectorRank?: number;
  score: number;
}

function createVectorRetrieval(options: RetrievalOptions): Retrieval {
  const { sql, embedder, vectorSearch } = options;
  return {
    mode: "vector",
    async search(query, options = {}) {
      const hits = await vectorSearch.search({
        ...query,
        embedding: await embedOne(embedder, query.text),
      });
      const chains = await chainStore.byIds(
        sql,
        hits.map((h) => h.chainId),
      );
      const similarity = new Map(hits.map((h) => [h.chainId, h.similarity]));
      const rank = new Map(hits.map((h, i) => [h.chainId, i]));
      return chains.map((c) => ({
        sourceType: "dialogue_page",
        sourceId: c.id,
        content: c.summary,
        turns: [],
        score: similarity.get(c.id) ?? 0,
        timestamp: c.lastEventAt,
        ...(options.explain ? { ranks: { lexical: null, vector: place(rank.get(c.id)) } } : {}),
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
  const kind = embedder.semantic ? "semantic" : "lexical";
  return {
    mode: "hybrid",
    async search(query, options = {}) {
      const owner = { tenantId: query.tenantId, userId: query.userId };
      // Pending turns are read before the chain lists: a chain check committing in between
      // leaves its turns in a chain those lists then see, so no turn falls between the two.
      const [terms, queryVector, pendingTurns] = await Promise.all([
        lexical.terms(query),
        embedOne(embedder, query.text),
        turnStore.pending(sql, query, MAX_PENDING_TURNS),
      ]);
      const focus = await focusQuery(embedder, query.text, terms, queryVector);
      const candidateTurns = Math.max(MIN_TURN_CANDIDATES, query.limit * 3);
      const [lexicalTurns, lexicalChains, vectorChains] = await Promise.all([
        lexical.turns({ ...query, limit: candidateTurns }, terms),
        lexical.chains({ ...query, limit: CHAIN_CANDIDATES }, terms),
        vectorSearch.search({
          ...query,
          embedding: focus.vector,
          limit: Math.max(CHAIN_CANDIDATES, query.limit),
        }),
      ]);
      const sources = lexicalTurns.slice(0, FEEDBACK_SOURCES).map((t) => t.eventId);
      const secondHop = async () => {
        const feedbackTerms = await lexical.feedback(query, sources, terms, FEEDBACK_TERMS);
        // The turns the terms came from hold them all: the second query is for the others.
        return (await lexical.turns({ ...query, limit: candidateTurns }, feedbackTerms)).filter(
          (t) => !sources.includes(t.eventId),
        );
      };
      const expanded = [
        ...new Set([
          ...vectorChains
            .slice(0, Math.max(EXPANDED_VECTOR_CHAINS, query.limit))
            .map((h) => h.chainId),
          ...lexicalChains.slice(0, EXPANDED_LEXICAL_CHAINS).map((c) => c.chainId),
        ]),
      ];
      const [feedbackTurns, chainTurns, datedTurns] = await Promise.all([
        secondHop(),
        turnStore.ofChains(sql, owner, expanded),
        turnsOfNamedDays(sql, query, terms),
      ]);

      const candidates = new Map<string, Candidate>();
      const candidate = (turn: Turn & { chainId?: string }, chainId = turn.chainId) => {
        let known = candidates.get(turn.eventId);
        if (!known) {
          known = { turn, lexicalShare: 0, coverage: 0, cosine: 0, score: 0 };
          candidates.set(turn.eventId, known);
        }
        known.chainId ??= chainId;
        return known;
      };
      lexicalTurns.forEach((t, rank) => {
        const c = candidate(t);
        c.lexicalRank = rank;
        c.lexicalShare = t.score / lexicalTurns[0].score;
        c.coverage = t.coverage;
      });
      feedbackTurns.forEach((t, rank) => {
        candidate(t).feedbackRank = rank;
      });
      datedTurns.forEach((t, rank) => {
        candidate(t).dateRank = rank;
      });
      for (const turn of pendingTurns) candidate(turn);
      for (const chainId of expanded) {
        for (const turn of chainTurns.get(chainId) ?? []) candidate(turn, chainId);
      }
      // A reply quoting memory back is no evidence beside the turn it quotes, nor in its place.
      for (const id of memoryEchoes([...candidates.values()].map((c) => c.turn))) {
        candidates.delete(id);
      }

      const speaker = speakerNamed(
        focus.common,
        [...candidates.values()].map((c) => c.turn),
      );

      const embedded = [...candidates.values()].slice(0, MAX_EMBEDDED_TURNS);
      const vectors = await embedder.embed(embedded.map((c) => focus.strip(c.turn.content)));
      embedded.forEach((c, i) => {
        c.cosine = Math.max(0, cosineSimilarity(focus.vector, vectors[i]));
      });
      embedded
        .filter((c) => c.cosine > 0)
        .sort((a, b) => b.cosine - a.cosine)
        .forEach((c, rank) => {
          c.vectorRank = rank;
        });

      const vectorChainRank = new Map(vectorChains.map((h, rank) => [h.chainId, rank]));
      const lexicalChainRank = new Map(lexicalChains.map((c, rank) => [c.chainId, rank]));
      const topCosine = Math.max(0, ...embedded.map((c) => c.cosine));
      const quotable = (c: Candidate) =>
        c.lexicalShare >= MIN_LEXICAL_SHARE ||
        (c.feedbackRank ?? FEEDBACK_KEPT) < FEEDBACK_KEPT ||
        (c.dateRank ?? DATE_KEPT) < DATE_KEPT ||
        (c.cosine > 0 && c.cosine >= MIN_COSINE_SHARE[kind] * topCosine);
      const ranked: Candidate[] = [];
      for (const c of candidates.values()) {
        if (!quotable(c)) continue;
        const chain = c.chainId;
        const onDay = datedTurns.length === 0 || c.dateRank !== undefined;
        const bySpeaker = speaker === undefined || c.turn.role === speaker;
        c.score =
          (onDay ? 1 : OFF_DAY_FACTOR) *
          (bySpeaker ? 1 : OTHER_SPEAKER_FACTOR) *
          (LEXICAL_WEIGHT * rrf(c.lexicalRank) +
            FEEDBACK_WEIGHT * rrf(c.feedbackRank) +
            DATE_WEIGHT * rrf(c.dateRank) +
            VECTOR_WEIGHT[kind] * rrf(c.vectorRank) +
            (chain === undefined
              ? 0
              : CHAIN_WEIGHT *
                (rrf(vectorChainRank.get(chain)) + rrf(lexicalChainRank.get(chain)))));
        ranked.push(c);
      }
      ranked.sort(
        (a, b) => b.score - a.score || b.turn.occurredAt.getTime() - a.turn.occurredAt.getTime(),
      );
      // The agent replies that can be quoted, with the user turns they answer.
      const replies = ranked
        .slice(0, query.limit)
        .filter((c) => c.turn.role === "agent")
        .map((c) => c.turn.eventId);
      // The user questions that can be quoted, with the replies that answer them.
      const questions = ranked
        .slice(0, query.limit)
        .filter((c) => c.turn.role === "user" && c.turn.content.trimEnd().endsWith("?"))
        .map((c) => c.turn.eventId);
      const [answered, answers, neighbours] = await Promise.all([
        turnsAnswered(sql, owner, replies),
        repliesTo(sql, owner, questions),
        sameSpeakerNeighbours(
          sql,
          owner,
          ranked.slice(0, NEIGHBOUR_TURNS).map((c) => c.turn.eventId),
          NEIGHBOUR_SECONDS,
        ),
      ]);
      return pagesOf(
        ranked,
        query.limit,
        terms.terms.map((t) => t.lexeme),
        options.explain === true,
        answered,
        answers,
        neighbours,
      );
    },
  };
}

/**
 * The best turns, at most `limit` of them, grouped into their pages in the order the pages'
 * best turns rank. A quoted agent reply brings the user turn it answers (`answered`) into its
 * page, beside the `limit` (on REALTALK, counting it in cost 2.7 points of evidence@10); the
 * first turns bring their speaker's messages just before and after (`neighbours`), likewise.
 */
function pagesOf(
  ranked: Candidate[],
  limit: number,
  lexemes: string[],
  explain: boolean,
  answered: Map<string, Turn & { chainId?: string }>,
  answers: Map<string, Turn & { chainId?: string }>,
  neighbours: Map<string, Neighbour[]>,
): RetrievedPage[] {
  // A neighbour that is itself among the best turns is quoted as what matched, in its place.
  const bestTurns = new Set(ranked.slice(0, limit).map((c) => c.turn.eventId));
  const pages = new Map<string, { matched: Candidate[]; turns: PageTurn[] }>();
  const quotedIds = new Set<string>();
  const quotedAs = new Map<string, QuotedAs>();
  let quoted = 0;
  for (const candidate of ranked) {
    if (quoted >= limit) break;
    if (quotedIds.has(candidate.turn.eventId)) continue;
    const key = candidate.chainId ?? `message:${candidate.turn.eventId}`;
    let page = pages.get(key);
    if (page && page.matched.length >= MAX_TURNS_PER_PAGE) continue;
    if (!page) {
      page = { matched: [], turns: [] };
      pages.set(key, page);
    }
    page.matched.push(candidate);
    const question = answered.get(candidate.turn.eventId);
    if (question && !quotedIds.has(question.eventId)) {
      page.turns.push(question);
      quotedIds.add(question.eventId);
      quotedAs.set(question.eventId, "answered");
    }
    const { eventId, sessionId, role, source, content, occurredAt } = candidate.turn;
    page.turns.push({
      eventId,
      sessionId,
      role,
      source,
      content,
      occurredAt,
      ...(candidate.chainId ? { chainId: candidate.chainId } : {}),
    });
    quotedIds.add(candidate.turn.eventId);
    quoted++;
    const reply = answers.get(candidate.turn.eventId);
    if (reply && !quotedIds.has(reply.eventId)) {
      page.turns.push(reply);
      quotedIds.add(reply.eventId);
      quotedAs.set(reply.eventId, "reply");
    }
    for (const { turn, before } of neighbours.get(candidate.turn.eventId) ?? []) {
      if (quotedIds.has(turn.eventId) || bestTurns.has(turn.eventId)) continue;
      page.turns.push(turn);
      quotedIds.add(turn.eventId);
      quotedAs.set(turn.eventId, before ? "before" : "after");
    }
  }
  const grouped = [...pages.values()];
  const relevance = ({ matched }: { matched: Candidate[] }) =>
    Math.max(...matched.map((c) => Math.max(c.coverage, c.cosine)));
  const best = Math.max(0, ...grouped.map(relevance));
  const top = grouped[0]?.matched[0].score ?? 1;
  return grouped.map(({ matched, turns }) => {
    const first = matched[0];
    const inOrder = orderOfSaying(turns);
    return {
      sourceType: first.chainId ? "dialogue_page" : "message",
      sourceId: first.chainId ?? first.turn.eventId,
      content: quoteTurns(
        inOrder.map((turn) => ({ turn, lexemes, as: quotedAs.get(turn.eventId) })),
      ),
      turns: inOrder,
      score: (best * first.score) / top,
      timestamp: first.turn.occurredAt,
      ...(explain
        ? { ranks: { lexical: place(first.lexicalRank), vector: place(first.vectorRank) } }
        : {}),
    };
  });
}
