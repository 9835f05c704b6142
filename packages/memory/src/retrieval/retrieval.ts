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
import { focusQuery, isOneOf, WORD } from "./query-focus.js";
import {
  orderOfSaying,
  type QuotedAs,
  type QuoteTerm,
  quotedAsAnswered,
  quoteTurns,
} from "./quote-turns.js";
import {
  nameAsked,
  namePrefix,
  type SpeakerNames,
  speakerNamed,
  speakerNames,
} from "./speaker-focus.js";
import { turnsOfNamedDays } from "./turns-of-days.js";

/** A user's search: `limit` pages at most, the filter on each message's (or chain's) metadata. */
export type RetrievalQuery = LexicalQuery;

/** A turn a page quotes, as a program reads it. */
export type PageTurn = Turn & {
  /** The dialogue page the turn is in; absent until its chain check has run. */
  chainId?: string;
};

/**
 * One result: a turn that matched, quoted with the turns a reader needs beside it (the user turn
 * an agent reply answers, the reply to a question, the speaker's messages just before and after).
 */
export interface RetrievedPage {
  /**
   * `dialogue_page` (sourceId is the chain the matched turn is in) or, for a turn whose chain
   * check has not run yet, `message` (sourceId is the turn). Only this label changes when the
   * check runs: which turns come back, in what order and with what score does not.
   */
  sourceType: "dialogue_page" | "message";
  sourceId: string;
  content: string;
  /**
   * The turns `content` quotes, whole, oldest first: the one that matched and those beside it.
   * None in vector mode (a page is its chain's summary).
   */
  turns: PageTurn[];
  /**
   * 0–1, higher is surer, descending down the list. The first result carries how sure the search
   * is of its matched turn (`confidence`), so a caller can hold it to a floor; the others carry
   * that value scaled by their fused score relative to the first's.
   */
  score: number;
  /** When the matched turn was said. */
  timestamp: Date;
  /** Present when the search was asked to explain itself (`SearchOptions.explain`). */
  ranks?: RetrievalRanks;
}

/**
 * Why a result ranks where it does: the 1-based places of its turn (hybrid) or its chain (vector
 * mode) in the lexical (BM25) and the vector (cosine) ranking that were fused; null where that
 * retriever did not find it.
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
 * first hit links to (multi-hop). The vector side weighs fully with a trained embedder; with the
 * hashing embedders its vectors restate the words BM25 already scored, with more noise, so they
 * mostly reorder (bench/memory/recall).
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
const VECTOR_WEIGHT = { semantic: 1, lexical: 0.2 };
/**
 * What a turn needs to be quoted at all, so that an answer carries what matched and not a
 * padding of near misses: a BM25 score at least this share of the best turn's, a place among
 * the first feedback hits, or a cosine this close to the best turn's.
 */
const MIN_LEXICAL_SHARE = 0.4;
const FEEDBACK_KEPT = 2;
const DATE_KEPT = 3;
const MIN_COSINE_SHARE = { semantic: 0.85, lexical: 1 };
/**
 * The list of turns by word closeness (`Embedder.wordCloseness`) weighs as BM25's. It ranks and
 * never makes a turn quotable by itself: on REALTALK that would add 41 characters a question for
 * 0.1 point.
 */
const WORDS_WEIGHT = 1;
/** Turns whose rarest words seed the feedback query, and how many of those words it takes. */
const FEEDBACK_SOURCES = 2;
const FEEDBACK_TERMS = 4;
/**
 * Turns the second query scores at most, those holding its rarest terms first: what it looks for
 * is the few turns that share a rare word with the best hits (a quarter of the first query's
 * rows; in a memory of a million turns the second query cost as much as the first).
 */
const FEEDBACK_SCORED = 100;
const MIN_TURN_CANDIDATES = 50;
/** Chains nearest the question by their vectors, whose turns are ranked by vector too. */
const EXPANDED_CHAINS = 5;
/** Bounds the embedding work per search (GloVe: ~9 µs a turn of 25 words; hash: ~25 µs). */
const MAX_EMBEDDED_TURNS = 200;
/**
 * The best turns quoted with their speaker's messages just before and after, said within
 * NEIGHBOUR_SECONDS: people type one thought as several messages, and the words a question shares
 * sit in one of them while what it asks for is in the next. On REALTALK the 4 best: 75.9 %, the
 * answer shown for 64.0 % of 414, 1,628 characters a question; the 2 best 74.9 %, 63.0 %, 1,525;
 * the 6 best 76.3 % for 1,723, more than BM25's 1,638. A chat whose speakers take strict turns
 * has no such messages, and pays nothing.
 */
const NEIGHBOUR_TURNS = 4;
const NEIGHBOUR_SECONDS = 180;
/**
 * The best turns that, ending with a question, are quoted with the other speaker's reply. A
 * conversation between people asks back in many turns ("…, what about you?"), and a reply to a
 * lower-ranked one cost more than it found: on REALTALK, the 6 best against all 10, 0.0 to 0.3
 * points of evidence@10 for 26 to 45 characters a question fewer (per message with session
 * dates 76.7 % both, 1,382 → 1,356; with their own times 76.5 → 76.3 %, 1,450 → 1,420; runs of
 * a speaker joined 79.0 → 78.7 %, 1,504 → 1,459); none at all, 75.9 % for 1,314 (session
 * dates).
 */
const REPLIED_TURNS = 6;
/**
 * The user's newest turns, ranked by vector beside what matched the words: a stored turn is
 * found by meaning from its acknowledgement on (read-your-writes).
 */
const NEWEST_TURNS = 50;

const rrf = (rank: number | undefined) => (rank === undefined ? 0 : 1 / (RRF_K + rank + 1));
const place = (rank: number | undefined) => (rank === undefined ? null : rank + 1);

interface Candidate {
  turn: Turn & { chainId?: string };
  lexicalRank?: number;
  /** BM25 score as a share of the best turn's. */
  lexicalShare: number;
  feedbackRank?: number;
  dateRank?: number;
  coverage: number;
  cosine: number;
  vectorRank?: number;
  /** Its place by word closeness (`Embedder.wordCloseness`), where the embedder has it. */
  wordRank?: number;
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
 * Hybrid retrieval: BM25 over the user's messages, a second BM25 query for what the best hits
 * link to, the turns of a day the question names, the user's newest turns and the turns of the
 * chains nearest the question by vector, fused per turn with reciprocal rank fusion beside the
 * turns' cosine to the question. Each of the best turns is a result quoting it with speaker and
 * time.
 *
 * A turn is ranked by what is known when its write is acknowledged: the word statistics count
 * messages waiting for their chain check (lexical-search.ts), the newest turns are candidates
 * whether chained or not, and neither a turn's score nor which turns share a result depends on
 * its chain. A search made right after a write therefore returns what the same search returns
 * once the check ran (read-your-writes); the check turns a result's `message` label into its
 * `dialogue_page`. Chains only widen the candidates, by meaning (a question in other words than
 * its answer); their summaries and their ranks no longer weigh in. What can still differ: a
 * check that merges the chain it closed into an older one moves that chain's vector, and with it
 * which older turns are candidates (0 of 1,000 store-then-search pairs, bench/memory).
 */
export function createRetrieval(options: RetrievalOptions): Retrieval {
  if (options.mode === "vector") return createVectorRetrieval(options);
  const { sql, embedder, vectorSearch, lexical } = options;
  const kind = embedder.semantic ? "semantic" : "lexical";
  return {
    mode: "hybrid",
    async search(query, options = {}) {
      const owner = { tenantId: query.tenantId, userId: query.userId };
      const [terms, queryVector, newestTurns] = await Promise.all([
        lexical.terms(query),
        embedOne(embedder, query.text),
        turnStore.newest(sql, query, NEWEST_TURNS),
      ]);
      const focus = await focusQuery(embedder, query.text, terms, queryVector);
      const candidateTurns = Math.max(MIN_TURN_CANDIDATES, query.limit * 3);
      // Two sequences of work side by side: the lexical hops (round trips to PostgreSQL, little
      // work here) and the dialogue chains nearest by vector (in a large memory mostly the scan
      // of their vectors here, which gives way now and then so that the hops go on beside it).
      const lexicalHops = async () => {
        const first = await lexical.turns({ ...query, limit: candidateTurns }, terms);
        const sources = first.slice(0, FEEDBACK_SOURCES).map((t) => t.eventId);
        const feedbackTerms = await lexical.feedback(query, sources, terms, FEEDBACK_TERMS);
        // The turns the terms came from hold them all: the second query is for the others.
        const second = await lexical.turns(
          { ...query, limit: candidateTurns },
          feedbackTerms,
          FEEDBACK_SCORED,
        );
        return { first, second: second.filter((t) => !sources.includes(t.eventId)) };
      };
      const turnsOfNearestChains = async () => {
        const nearest = await vectorSearch.search({
          ...query,
          embedding: focus.vector,
          limit: Math.max(EXPANDED_CHAINS, query.limit),
        });
        return turnStore.ofChains(
          sql,
          owner,
          nearest.map((h) => h.chainId),
        );
      };
      const [{ first: lexicalTurns, second: feedbackTurns }, datedTurns, chainTurns] =
        await Promise.all([
          lexicalHops(),
          turnsOfNamedDays(sql, query, terms),
          turnsOfNearestChains(),
        ]);

      const candidates = new Map<string, Candidate>();
      const candidate = (turn: Turn & { chainId?: string }) => {
        let known = candidates.get(turn.eventId);
        if (!known) {
          known = { turn, lexicalShare: 0, coverage: 0, cosine: 0, score: 0 };
          candidates.set(turn.eventId, known);
        }
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
      for (const turn of newestTurns) candidate(turn);
      for (const turns of chainTurns.values()) for (const turn of turns) candidate(turn);
      // Who speaks, by name, where the transcript names them: how results quote them, and
      // part of how a quote of memory's results reads.
      const names = speakerNames([...candidates.values()].map((c) => c.turn));
      // A reply quoting memory back is no evidence beside the turn it quotes, nor in its place.
      for (const id of memoryEchoes(
        [...candidates.values()].map((c) => c.turn),
        names,
      )) {
        candidates.delete(id);
      }

      const turnsAtHand = [...candidates.values()].map((c) => c.turn);
      const absent = terms.terms.filter((t) => t.documents === 0).map((t) => t.lexeme);
      const asked = nameAsked(
        terms.terms.map((t) => t.lexeme),
        names,
        (query.text.match(WORD) ?? []).filter((word) => isOneOf(word, absent)),
      );
      const side = asked === undefined ? speakerNamed(focus.common, turnsAtHand) : undefined;
      const bySpeaker = (turn: Turn) =>
        asked !== undefined
          ? namePrefix(turn.content) === asked
          : side === undefined || turn.role === side;

      const embedded = [...candidates.values()].slice(0, MAX_EMBEDDED_TURNS);
      const texts = embedded.map((c) => focus.strip(c.turn.content));
      const vectors = await embedder.embed(texts);
      const cosines = vectors.map((v) => Math.max(0, cosineSimilarity(focus.vector, v)));
      embedded.forEach((c, i) => {
        c.cosine = cosines[i];
      });
      highestFirst(embedded, cosines).forEach((c, rank) => {
        c.vectorRank = rank;
      });
      if (embedder.wordCloseness) {
        const closeness = embedder.wordCloseness(focus.strip(query.text), texts);
        highestFirst(embedded, closeness).forEach((c, rank) => {
          c.wordRank = rank;
        });
      }

      const topCosine = Math.max(0, ...embedded.map((c) => c.cosine));
      const quotable = (c: Candidate) =>
        c.lexicalShare >= MIN_LEXICAL_SHARE ||
        (c.feedbackRank ?? FEEDBACK_KEPT) < FEEDBACK_KEPT ||
        (c.dateRank ?? DATE_KEPT) < DATE_KEPT ||
        (c.cosine > 0 && c.cosine >= MIN_COSINE_SHARE[kind] * topCosine);
      const ranked: Candidate[] = [];
      for (const c of candidates.values()) {
        if (!quotable(c)) continue;
        const onDay = datedTurns.length === 0 || c.dateRank !== undefined;
        c.score =
          (onDay ? 1 : OFF_DAY_FACTOR) *
          (bySpeaker(c.turn) ? 1 : OTHER_SPEAKER_FACTOR) *
          (LEXICAL_WEIGHT * rrf(c.lexicalRank) +
            FEEDBACK_WEIGHT * rrf(c.feedbackRank) +
            DATE_WEIGHT * rrf(c.dateRank) +
            VECTOR_WEIGHT[kind] * rrf(c.vectorRank) +
            WORDS_WEIGHT * rrf(c.wordRank));
        ranked.push(c);
      }
      ranked.sort(
        (a, b) => b.score - a.score || b.turn.occurredAt.getTime() - a.turn.occurredAt.getTime(),
      );
      // The agent replies that can be quoted, with the user turns they answer. In a transcript
      // of two named people neither side is an assistant whose short replies ("Biscuit sounds
      // lovely.") say nothing without the turn before, and one side's turns bringing the other's
      // was arbitrary: on REALTALK it cost 118 characters a question for 0.3 points of evidence
      // (162 and 0.8 with each run of a speaker's messages joined into one turn).
      const twoPeople = names.user !== undefined && names.agent !== undefined;
      const replies = ranked
        .slice(0, query.limit)
        .filter((c) => c.turn.role === "agent" && !twoPeople)
        .map((c) => c.turn.eventId);
      // The questions that can be quoted, either speaker's, with the replies that answer them.
      const questions = ranked
        .slice(0, Math.min(query.limit, REPLIED_TURNS))
        .filter((c) => c.turn.content.trimEnd().endsWith("?"))
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
      // A turn quoted beside a match is held to the same rule as the matches.
      const echoes = memoryEchoes(
        [
          ...[...candidates.values()].map((c) => c.turn),
          ...answered.values(),
          ...answers.values(),
          ...[...neighbours.values()].flat().map((n) => n.turn),
        ],
        names,
      );
      return pagesOf(
        ranked,
        query.limit,
        terms.terms.map((t) => ({ lexeme: t.lexeme, weight: t.idf })),
        names,
        options.explain === true,
        { answered, answers, neighbours, echoes },
      );
    },
  };
}

/** The candidates whose value (`values[i]` for `candidates[i]`) is above 0, highest first. */
function highestFirst(candidates: Candidate[], values: number[]): Candidate[] {
  return candidates
    .map((c, i) => ({ c, value: values[i] }))
    .filter((x) => x.value > 0)
    .sort((a, b) => b.value - a.value)
    .map((x) => x.c);
}

/** A place in a ranking as a weight: 1 for the first, 1/2 for the second…, 0 when absent. */
const placeWeight = (rank: number | undefined) => (rank === undefined ? 0 : 1 / (1 + rank));

/**
 * How sure the search is of a matched turn, 0–1: how close it is (the larger of the share of the
 * question's word rarity it holds and its cosine to the question) times how far the lexical and
 * the vector ranking agree it comes first. On REALTALK a right first hit outscores a wrong one in
 * 76 % of pairs (ROC AUC 0.76; the list's best closeness, which this replaced, 0.63 on the same
 * results; the closeness alone 0.71), on the generated set 0.60 (0.42 before): a turn holding
 * every word of the question is close whether or not it answers it, and a turn both rankings
 * put first is more often the one that does.
 */
function confidence(c: Candidate): number {
  return (
    (Math.max(c.coverage, c.cosine) * (placeWeight(c.lexicalRank) + placeWeight(c.vectorRank))) / 2
  );
}

/** What is quoted beside a matched turn, by the matched turn's id, and what never is. */
interface TurnsBeside {
  answered: Map<string, Turn & { chainId?: string }>;
  answers: Map<string, Turn & { chainId?: string }>;
  neighbours: Map<string, Neighbour[]>;
  echoes: Set<string>;
}

interface Result {
  matched: Candidate;
  turns: PageTurn[];
  quotedAs: Map<string, QuotedAs>;
}

/**
 * The best turns, at most `limit` of them, each a result in rank order. A quoted agent reply
 * brings the user turn it answers (`answered`; after a long reply by its last words, `asked`), a
 * quoted question the other speaker's reply to it (`answers`; an agent's question then leaves
 * out the turn it answers),
 * and the first turns their speaker's messages just before and after (`neighbours`), beside the
 * `limit` (on REALTALK, counting them in cost 2.7 points of evidence@10). A turn is quoted once:
 * one that a result already quotes is not a result of its own, and a reply to a result's matched
 * turn joins that result. Which turns share a result depends only on what was said, never on
 * chains, so it is the same before and after a chain check.
 */
function pagesOf(
  ranked: Candidate[],
  limit: number,
  terms: QuoteTerm[],
  names: SpeakerNames,
  explain: boolean,
  { answered, answers, neighbours, echoes }: TurnsBeside,
): RetrievedPage[] {
  // A neighbour that is itself among the best turns is quoted as what matched, in its place.
  const bestTurns = new Set(ranked.slice(0, limit).map((c) => c.turn.eventId));
  const quotedIds = new Set<string>();
  const results: Result[] = [];
  /** The result whose matched turn a reply answers: the exchange is read as one. */
  const resultOf = new Map<string, Result>();
  let quoted = 0;
  for (const candidate of ranked) {
    if (quoted >= limit) break;
    if (quotedIds.has(candidate.turn.eventId)) continue;
    quoted++;
    const reply = answers.get(candidate.turn.eventId);
    const question = answered.get(candidate.turn.eventId);
    const joined = question && resultOf.get(question.eventId);
    const result: Result = joined || { matched: candidate, turns: [], quotedAs: new Map() };
    if (!joined) results.push(result);
    resultOf.set(candidate.turn.eventId, result);
    const quote = (turn: PageTurn, as?: QuotedAs) => {
      if (as && echoes.has(turn.eventId)) return;
      result.turns.push(turn);
      quotedIds.add(turn.eventId);
      if (as) result.quotedAs.set(turn.eventId, as);
    };
    // Quoted in the order they were said: turns stored with one time (a transcript imported
    // with its dates only) are then put in order by time alone, which keeps this order for them.
    const beside = neighbours.get(candidate.turn.eventId) ?? [];
    const quoteNeighbours = (before: boolean) => {
      for (const neighbour of beside) {
        const { turn } = neighbour;
        if (neighbour.before !== before) continue;
        if (quotedIds.has(turn.eventId) || bestTurns.has(turn.eventId)) continue;
        quote(turn, before ? "before" : "after");
      }
    };
    quoteNeighbours(true);
    // An agent's question is read with the user's answer to it, not with what came before it.
    if (question && !reply && !quotedIds.has(question.eventId)) {
      quote(question, quotedAsAnswered(candidate.turn));
    }
    const { eventId, chainId, sessionId, role, source, content, occurredAt } = candidate.turn;
    quote({
      eventId,
      sessionId,
      role,
      source,
      content,
      occurredAt,
      ...(chainId ? { chainId } : {}),
    });
    if (reply && !quotedIds.has(reply.eventId)) quote(reply, "reply");
    quoteNeighbours(false);
  }
  const first = results[0] ? confidence(results[0].matched) : 0;
  const top = results[0]?.matched.score ?? 1;
  return results.map(({ matched, turns, quotedAs }) => {
    const inOrder = orderOfSaying(turns);
    const { chainId, eventId } = matched.turn;
    return {
      sourceType: chainId ? "dialogue_page" : "message",
      sourceId: chainId ?? eventId,
      content: quoteTurns(
        inOrder.map((turn) => ({ turn, terms, as: quotedAs.get(turn.eventId) })),
        names,
      ),
      turns: inOrder,
      score: (first * matched.score) / top,
      timestamp: matched.turn.occurredAt,
      ...(explain
        ? { ranks: { lexical: place(matched.lexicalRank), vector: place(matched.vectorRank) } }
        : {}),
    };
  });
}
