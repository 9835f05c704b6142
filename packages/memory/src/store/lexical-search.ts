import type { Sql } from "@atrium/kit";
import type { EventSource } from "../domain.js";
import { type ScopeFilter, scopeFilterClause } from "./scope-filter.js";
import { TURN_COLUMNS, type TurnRow, toTurn } from "./turns.js";

/**
 * BM25 over PostgreSQL's English full-text vectors (migrations/0003_lexical_search.sql), scoped
 * to one user. PostgreSQL finds the candidates through the GIN index and scores them in the same
 * statement; the document frequencies count every acknowledged message of the user, so a rare
 * word outweighs the speakers' names that occur in every turn: the per-user lexicon the chain
 * check keeps, plus the messages still waiting for their check, read in the same statement (a
 * check moving a message from one to the other in between cannot count it twice or not at
 * all). A search made right after a write therefore scores as it does once the check ran.
 */
export interface LexicalQuery extends ScopeFilter {
  tenantId: string;
  userId: string;
  text: string;
  limit: number;
}

export interface QueryTerm {
  lexeme: string;
  idf: number;
  /** Messages of the user that contain the lexeme. */
  documents: number;
}

/** A query's lexemes with the user's statistics, read once and used by every list. */
export interface QueryTerms {
  terms: QueryTerm[];
  /** Messages of the user counted into the statistics. */
  total: number;
  averageLength: number;
}

export interface LexicalTurn {
  eventId: string;
  /** The dialogue page the turn is in; absent until its chain check has run. */
  chainId?: string;
  sessionId: string;
  role: "user" | "agent";
  source: EventSource;
  content: string;
  occurredAt: Date;
  score: number;
  /** Share of the query's IDF mass this turn contains, 0–1: an absolute relevance. */
  coverage: number;
}

export interface LexicalSearch {
  /** The query's lexemes with their IDF in the user's messages; none for stopword-only text. */
  terms(query: Omit<LexicalQuery, "limit">): Promise<QueryTerms>;
  /**
   * The best `limit` of the messages holding the candidate terms, of at most `scored` of them
   * (rarest term first; 400 unless given).
   */
  turns(query: LexicalQuery, terms: QueryTerms, scored?: number): Promise<LexicalTurn[]>;
  /**
   * Pseudo-relevance feedback: the rarest lexemes of the given messages that the query lacks,
   * as terms of a second query. A question that names a thing one turn links to another ("the
   * friend who became a sommelier") reaches the other turn through the name the first one adds.
   */
  feedback(
    query: Omit<LexicalQuery, "limit">,
    eventIds: string[],
    terms: QueryTerms,
    count: number,
  ): Promise<QueryTerms>;
}

// Okapi BM25's usual constants.
const K1 = 1.2;
const B = 0.75;
/**
 * Candidates come only from terms at most this common (or the rarest term when all are
 * common): a word in half of a million turns would make the index return half a million rows,
 * and the turns ranked first always contain a rarer term when the query has one.
 */
const CANDIDATE_MAX_SHARE = 0.001;
const CANDIDATE_MIN_DOCUMENTS = 1000;
/**
 * Rows scored per query at most, taken rarest term first (all the turns holding the rarest term,
 * then those holding the next, ...), so that the turns a cap leaves out hold only commoner
 * terms. Only reached in a large memory: scoring a row costs PostgreSQL about 7 µs.
 */
const MAX_CANDIDATES = 400;
/** The rarest query terms that are scored; a pasted paragraph stays one cheap query. */
const MAX_TERMS = 16;

/** A tsquery literal of one lexeme or several joined by OR, quoted as the tsquery grammar wants. */
function tsquery(lexemes: string[]): string {
  return lexemes.map((l) => `'${l.replaceAll("\\", "\\\\").replaceAll("'", "''")}'`).join(" | ");
}

/** The terms candidates are drawn from, rarest first (`terms` is sorted so). */
function candidateTerms({ terms, total }: QueryTerms): QueryTerm[] {
  const cap = Math.max(CANDIDATE_MIN_DOCUMENTS, total * CANDIDATE_MAX_SHARE);
  const chosen = terms.filter((t) => t.documents <= cap);
  return chosen.length > 0 ? chosen : [terms[0]];
}

/**
 * The candidate rows' statement (`match` is the WHERE clause they share). When the terms'
 * messages may be more than are `scored`, one branch per term, rarest first, each leaving out
 * the rows an earlier branch took, under one LIMIT (PostgreSQL runs the branches in order and
 * stops at the limit); otherwise all of them, through one index scan.
 */
function candidateRows(
  terms: QueryTerm[],
  scored: number,
  params: unknown[],
  match: string,
): string {
  const lexemes = terms.map((t) => t.lexeme);
  const holding = (some: string[]) => `e.search_vector @@ $${params.push(tsquery(some))}::tsquery`;
  const rows = (condition: string) =>
    `(SELECT e.id, e.seq, e.search_vector FROM memory_events e WHERE ${match} AND ${condition})`;
  const documents = terms.reduce((sum, t) => sum + t.documents, 0);
  if (documents <= scored) return rows(holding(lexemes));
  return lexemes
    .map((lexeme, i) =>
      rows(
        i === 0
          ? holding([lexeme])
          : `${holding([lexeme])} AND NOT (${holding(lexemes.slice(0, i))})`,
      ),
    )
    .join(" UNION ALL ");
}

const totalIdf = ({ terms }: QueryTerms) => terms.reduce((sum, t) => sum + t.idf, 0);

/**
 * The user's messages not through their chain check yet ($1 tenant, $2 user), which the lexicon
 * does not count yet: markChained moves them into it (store/events.ts). Few, unless checks fall
 * behind; read through the pending index.
 */
const WAITING = `waiting AS (
  SELECT e.search_vector FROM memory_events e
  WHERE e.tenant_id = $1 AND e.user_id = $2 AND e.chain_state = 'pending'
    AND e.search_vector IS NOT NULL
)`;

/**
 * For each lexeme of the relation `wanted` (a column `lexeme`, each lexeme once), the user's
 * messages that hold it (`documents`, WAITING in scope): the lexicon's count, a primary-key
 * lookup per lexeme, plus one for each waiting message that holds it. Feedback looks up every
 * lexeme of ten turns, a thousand for long ones: a subquery per lexeme over the waiting
 * messages' counts (a CTE, which has no index) took 400 ms with 135 long messages waiting, and
 * a join of the lexicon to the wanted lexemes, whose number the planner guesses at 10, was
 * planned as a nested loop over the user's whole lexicon (300 ms); counts added up by lexeme
 * leave the planner nothing to guess.
 */
const documentsOf = (wanted: string) => `documents AS (
  SELECT lexeme, sum(documents) AS documents FROM (
    SELECT x.lexeme,
      coalesce((SELECT l.documents FROM memory_lexicon l
                WHERE l.tenant_id = $1 AND l.user_id = $2 AND l.lexeme = x.lexeme), 0) AS documents
    FROM ${wanted} x
    UNION ALL
    SELECT t.lexeme, 1
    FROM waiting w, unnest(tsvector_to_array(w.search_vector)) AS t(lexeme)
    WHERE t.lexeme IN (SELECT lexeme FROM ${wanted})
  ) AS counted
  GROUP BY lexeme
)`;

export function createLexicalSearch(sql: Sql): LexicalSearch {
  return {
    async terms(query) {
      const { rows } = await sql.query<{
        lexeme: string;
        documents: number;
        total: number;
        lexemes: number;
      }>(
        `WITH ${WAITING},
         asked AS (SELECT unnest(tsvector_to_array(to_tsvector('english', $3))) AS lexeme),
         ${documentsOf("asked")},
         waiting_totals AS (
           SELECT count(*) AS documents, coalesce(sum(length(search_vector)), 0) AS lexemes
           FROM waiting
         )
         SELECT q.lexeme, q.documents,
           coalesce(t.documents, 0) + w.documents AS total,
           coalesce(t.lexemes, 0) + w.lexemes AS lexemes
         FROM documents q
         CROSS JOIN waiting_totals w
         LEFT JOIN memory_lexicon_totals t ON t.tenant_id = $1 AND t.user_id = $2`,
        [query.tenantId, query.userId, query.text],
      );
      const total = Number(rows[0]?.total ?? 0);
      const terms = rows
        .map((r) => {
          const documents = Math.min(Number(r.documents), total);
          // BM25's IDF with the +1 that keeps it positive for words in most documents.
          const idf = Math.log(1 + (total - documents + 0.5) / (documents + 0.5));
          return { lexeme: r.lexeme, idf, documents };
        })
        .sort((a, b) => a.documents - b.documents || (a.lexeme < b.lexeme ? -1 : 1))
        .slice(0, MAX_TERMS);
      return { terms, total, averageLength: total > 0 ? Number(rows[0].lexemes) / total : 1 };
    },

    async turns(query, terms, scored = MAX_CANDIDATES) {
      if (terms.terms.length === 0) return [];
      const params: unknown[] = [query.tenantId, query.userId];
      const match = `e.tenant_id = $1 AND e.user_id = $2 AND e.search_vector IS NOT NULL${scopeFilterClause(query, params, "e")}`;
      const candidates = candidateRows(candidateTerms(terms), scored, params, match);
      params.push(
        terms.terms.map((t) => t.lexeme),
        terms.terms.map((t) => t.idf),
        terms.averageLength,
        query.limit,
      );
      const n = params.length;
      // A row's vector is cut to the query's lexemes before it is unnested and joined: all of
      // them at D, the column's only weight, those of the query marked A and kept. Unnesting
      // whole vectors cost most of the statement for long messages (400 candidates of 2,500
      // characters: 27 ms, now 7).
      const { rows } = await sql.query<TurnRow & { score: number; matched_idf: number }>(
        `WITH candidates AS (
           ${candidates}
           LIMIT ${Math.trunc(scored)}
         ), best AS (
           SELECT c.id, c.seq, s.matched_idf, s.score FROM candidates c,
           LATERAL (
             SELECT coalesce(sum(q.idf), 0) AS matched_idf,
               coalesce(sum(q.idf * ${K1 + 1} * cardinality(v.positions)
                 / (cardinality(v.positions) + ${K1} * (1 - ${B} + ${B} * length(c.search_vector)
                    / $${n - 1}::float8))), 0) AS score
             FROM unnest(ts_filter(setweight(c.search_vector, 'A', $${n - 3}::text[]), '{a}')) AS v
             JOIN unnest($${n - 3}::text[], $${n - 2}::float8[]) AS q(lexeme, idf)
               ON q.lexeme = v.lexeme
           ) s
           ORDER BY s.score DESC, c.seq DESC LIMIT $${n}
         )
         SELECT ${TURN_COLUMNS}, b.score, b.matched_idf
         FROM best b JOIN memory_events e ON e.id = b.id
         ORDER BY b.score DESC, b.seq DESC`,
        params,
      );
      const all = totalIdf(terms);
      return rows.map((r) => ({
        ...toTurn(r),
        score: Number(r.score),
        coverage: all > 0 ? Number(r.matched_idf) / all : 0,
      }));
    },

    async feedback(query, eventIds, terms, count) {
      const none = { ...terms, terms: [] };
      if (eventIds.length === 0 || count === 0) return none;
      const { rows } = await sql.query<{ lexeme: string; documents: number }>(
        `WITH ${WAITING},
         said AS (
           SELECT DISTINCT t.lexeme
           FROM memory_events e, unnest(tsvector_to_array(e.search_vector)) AS t(lexeme)
           WHERE e.id = ANY($3::uuid[]) AND e.tenant_id = $1 AND e.user_id = $2
             AND NOT (t.lexeme = ANY($4::text[]))
         ),
         ${documentsOf("said")}
         SELECT lexeme, documents FROM documents
         WHERE documents > 1
         ORDER BY documents, lexeme LIMIT $5`,
        [query.tenantId, query.userId, eventIds, terms.terms.map((t) => t.lexeme), count],
      );
      const total = terms.total;
      return {
        ...terms,
        terms: rows.map((r) => {
          const documents = Math.min(Number(r.documents), total);
          return {
            lexeme: r.lexeme,
            documents,
            idf: Math.log(1 + (total - documents + 0.5) / (documents + 0.5)),
          };
        }),
      };
    },
  };
}
