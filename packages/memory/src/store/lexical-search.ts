import type { Sql } from "@atrium/kit";

/**
 * BM25 over PostgreSQL's English full-text vectors (migrations/0003_lexical_search.sql), scoped
 * to one user. PostgreSQL finds the candidates through the GIN index and scores them in the same
 * statement; the document frequencies come from the per-user lexicon the chain check keeps, so
 * a rare word outweighs the speakers' names that occur in every turn.
 */
export interface LexicalQuery {
  tenantId: string;
  userId: string;
  /** Restricts to one agent's messages and chains; absent: all agents of the user. */
  agentId?: string;
  text: string;
  limit: number;
  /** Metadata equality filter (the message's own metadata, or the chain's). */
  filter?: Record<string, string>;
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
  sessionId: string;
  role: "user" | "agent";
  content: string;
  occurredAt: Date;
  score: number;
  /** Share of the query's IDF mass this turn contains, 0–1: an absolute relevance. */
  coverage: number;
  /** The query lexemes the turn contains, for quoting what matched. */
  matched: string[];
}

export interface LexicalChain {
  chainId: string;
  score: number;
  coverage: number;
}

export interface LexicalSearch {
  /** The query's lexemes with their IDF in the user's messages; none for stopword-only text. */
  terms(query: Omit<LexicalQuery, "limit">): Promise<QueryTerms>;
  turns(query: LexicalQuery, terms: QueryTerms): Promise<LexicalTurn[]>;
  chains(query: LexicalQuery, terms: QueryTerms): Promise<LexicalChain[]>;
}

// Okapi BM25's usual constants.
const K1 = 1.2;
const B = 0.75;
/**
 * Candidates come only from terms at most this common (or the rarest term when all are
 * common): a word in half of a million turns would make the index return half a million rows,
 * and the turns ranked first always contain a rarer term when the query has one.
 */
const CANDIDATE_MAX_SHARE = 0.02;
const CANDIDATE_MIN_DOCUMENTS = 2000;
/** Rows scored per query at most, the newest first; bounds the work for very common words. */
const MAX_CANDIDATES = 5000;

/** A tsquery literal of lexemes joined by OR; each lexeme quoted as the tsquery grammar wants. */
function orQuery(lexemes: string[]): string {
  return lexemes.map((l) => `'${l.replaceAll("\\", "\\\\").replaceAll("'", "''")}'`).join(" | ");
}

function candidateLexemes({ terms, total }: QueryTerms): string[] {
  const cap = Math.max(CANDIDATE_MIN_DOCUMENTS, total * CANDIDATE_MAX_SHARE);
  const chosen = terms.filter((t) => t.documents <= cap);
  if (chosen.length > 0) return chosen.map((t) => t.lexeme);
  const rarest = [...terms].sort((a, b) => a.documents - b.documents)[0];
  return [rarest.lexeme];
}

const totalIdf = ({ terms }: QueryTerms) => terms.reduce((sum, t) => sum + t.idf, 0);

export function createLexicalSearch(sql: Sql): LexicalSearch {
  function scopeClause(query: LexicalQuery, params: unknown[], alias: string): string {
    let clause = "";
    if (query.agentId !== undefined) {
      params.push(query.agentId);
      clause += ` AND ${alias}.agent_id = $${params.length}`;
    }
    if (query.filter && Object.keys(query.filter).length > 0) {
      params.push(JSON.stringify(query.filter));
      clause += ` AND ${alias}.metadata @> $${params.length}::jsonb`;
    }
    return clause;
  }

  /**
   * BM25 of the rows of a `candidates` CTE (id, search_vector) against the terms; `averageLength`
   * is an SQL expression.
   */
  function scoring(params: unknown[], { terms }: QueryTerms, averageLength: string): string {
    params.push(
      terms.map((t) => t.lexeme),
      terms.map((t) => t.idf),
    );
    const n = params.length;
    return `q AS (SELECT * FROM unnest($${n - 1}::text[], $${n}::float8[]) AS q(lexeme, idf)),
      scored AS (
        SELECT c.id,
          sum(q.idf * (cardinality(u.positions) * ${K1 + 1}) /
              (cardinality(u.positions) + ${K1} * (1 - ${B} + ${B} * length(c.search_vector) / ${averageLength}))) AS score,
          sum(q.idf) AS matched_idf,
          array_agg(q.lexeme) AS matched
        FROM candidates c, unnest(c.search_vector) AS u(lexeme, positions, weights)
        JOIN q ON q.lexeme = u.lexeme
        GROUP BY c.id
      )`;
  }

  return {
    async terms(query) {
      const { rows } = await sql.query<{
        lexeme: string;
        documents: number;
        total: number;
        lexemes: number;
      }>(
        `SELECT q.lexeme, coalesce(l.documents, 0) AS documents,
                coalesce(t.documents, 0) AS total, coalesce(t.lexemes, 0) AS lexemes
         FROM unnest(tsvector_to_array(to_tsvector('english', $3))) AS q(lexeme)
         LEFT JOIN memory_lexicon l
           ON l.tenant_id = $1 AND l.user_id = $2 AND l.lexeme = q.lexeme
         LEFT JOIN memory_lexicon_totals t ON t.tenant_id = $1 AND t.user_id = $2`,
        [query.tenantId, query.userId, query.text],
      );
      const total = Number(rows[0]?.total ?? 0);
      const terms = rows.map((r) => {
        const documents = Math.min(Number(r.documents), total);
        // BM25's IDF with the +1 that keeps it positive for words in most documents.
        const idf = Math.log(1 + (total - documents + 0.5) / (documents + 0.5));
        return { lexeme: r.lexeme, idf, documents };
      });
      return { terms, total, averageLength: total > 0 ? Number(rows[0].lexemes) / total : 1 };
    },

    async turns(query, terms) {
      if (terms.terms.length === 0) return [];
      const params: unknown[] = [query.tenantId, query.userId, orQuery(candidateLexemes(terms))];
      const extra = scopeClause(query, params, "e");
      params.push(terms.averageLength);
      const score = scoring(params, terms, `$${params.length}::float8`);
      params.push(query.limit);
      const { rows } = await sql.query<{
        id: string;
        session_id: string;
        role: "user" | "agent";
        content: string;
        occurred_at: Date;
        score: number;
        matched_idf: number;
        matched: string[];
      }>(
        `WITH candidates AS (
           SELECT e.id, e.search_vector FROM memory_events e
           WHERE e.tenant_id = $1 AND e.user_id = $2 AND e.search_vector IS NOT NULL
             AND e.search_vector @@ $3::tsquery${extra}
           ORDER BY e.seq DESC LIMIT ${MAX_CANDIDATES}
         ), ${score}
         SELECT e.id, e.session_id, e.role, e.content, e.occurred_at, s.score, s.matched_idf, s.matched
         FROM scored s JOIN memory_events e ON e.id = s.id
         ORDER BY s.score DESC, e.seq DESC
         LIMIT $${params.length}`,
        params,
      );
      const all = totalIdf(terms);
      return rows.map((r) => ({
        eventId: r.id,
        sessionId: r.session_id,
        role: r.role,
        content: r.content,
        occurredAt: r.occurred_at,
        score: Number(r.score),
        coverage: all > 0 ? Number(r.matched_idf) / all : 0,
        matched: r.matched,
      }));
    },

    async chains(query, terms) {
      if (terms.terms.length === 0) return [];
      const params: unknown[] = [
        query.tenantId,
        query.userId,
        orQuery(terms.terms.map((t) => t.lexeme)),
      ];
      const extra = scopeClause(query, params, "c");
      // Summaries are longer than messages: normalised by their own average.
      const score = scoring(
        params,
        terms,
        "(SELECT greatest(avg(length(search_vector)), 1) FROM candidates)",
      );
      params.push(query.limit);
      const { rows } = await sql.query<{ id: string; score: number; matched_idf: number }>(
        `WITH candidates AS (
           SELECT c.id, c.search_vector FROM memory_chains c
           WHERE c.tenant_id = $1 AND c.user_id = $2 AND c.status <> 'archived'
             AND c.search_vector @@ $3::tsquery${extra}
           ORDER BY c.last_event_at DESC LIMIT ${MAX_CANDIDATES}
         ), ${score}
         SELECT id, score, matched_idf FROM scored ORDER BY score DESC, id LIMIT $${params.length}`,
        params,
      );
      const all = totalIdf(terms);
      return rows.map((r) => ({
        chainId: r.id,
        score: Number(r.score),
        coverage: all > 0 ? Number(r.matched_idf) / all : 0,
      }));
    },
  };
}
