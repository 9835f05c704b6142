import type { SqlExecutor } from "@atrium/kit";
import type { EventSource } from "../domain.js";
import { type ScopeFilter, scopeFilterClause } from "./scope-filter.js";

/** A user or agent message as retrieval sees it: the unit that is matched and quoted. */
export interface Turn {
  eventId: string;
  sessionId: string;
  role: "user" | "agent";
  /** Where the text came from; never `memory` (a quote of memory is no search evidence). */
  source: EventSource;
  content: string;
  occurredAt: Date;
}

interface TurnRow {
  id: string;
  session_id: string;
  role: "user" | "agent";
  source: EventSource;
  content: string;
  occurred_at: Date;
}

/** A turn's source as a column: rows stored before sources were recorded read as their role. */
export const TURN_SOURCE = "coalesce(e.source, e.role) AS source";

const toTurn = (r: TurnRow): Turn => ({
  eventId: r.id,
  sessionId: r.session_id,
  role: r.role,
  source: r.source,
  content: r.content,
  occurredAt: r.occurred_at,
});

/** Reads behind retrieval: from messages to their dialogue pages and back. */
export const turnStore = {
  /** The messages of the given chains, by chain, in order. */
  async ofChains(
    db: SqlExecutor,
    owner: { tenantId: string; userId: string },
    chainIds: string[],
  ): Promise<Map<string, Turn[]>> {
    if (chainIds.length === 0) return new Map();
    const { rows } = await db.query<TurnRow & { chain_id: string }>(
      `SELECT c.id AS chain_id, e.id, e.session_id, e.role, ${TURN_SOURCE}, e.content, e.occurred_at
       FROM memory_chains c
       JOIN memory_events e ON e.id = ANY(c.event_ids)
       WHERE c.id = ANY($3::uuid[]) AND c.tenant_id = $1 AND c.user_id = $2
         AND e.search_vector IS NOT NULL
       ORDER BY e.seq`,
      [owner.tenantId, owner.userId, chainIds],
    );
    const byChain = new Map<string, Turn[]>();
    for (const row of rows) {
      const turns = byChain.get(row.chain_id) ?? [];
      turns.push(toTurn(row));
      byChain.set(row.chain_id, turns);
    }
    return byChain;
  },

  /** The given messages of the user, in the order of `ids`. */
  async byIds(
    db: SqlExecutor,
    owner: { tenantId: string; userId: string },
    ids: string[],
  ): Promise<Turn[]> {
    if (ids.length === 0) return [];
    const { rows } = await db.query<TurnRow>(
      `SELECT e.id, e.session_id, e.role, ${TURN_SOURCE}, e.content, e.occurred_at
       FROM memory_events e
       WHERE e.id = ANY($3::uuid[]) AND e.tenant_id = $1 AND e.user_id = $2`,
      [owner.tenantId, owner.userId, ids],
    );
    const byId = new Map(rows.map((r) => [r.id, toTurn(r)]));
    return ids.flatMap((id) => byId.get(id) ?? []);
  },

  /**
   * The user's newest messages still waiting for their chain check, newest first: what a search
   * reads beside the chains, so that a turn is found by meaning from the moment its write was
   * acknowledged, on every instance, not only once its page is written.
   */
  async pending(
    db: SqlExecutor,
    query: { tenantId: string; userId: string } & ScopeFilter,
    limit: number,
  ): Promise<Turn[]> {
    const params: unknown[] = [query.tenantId, query.userId];
    const extra = scopeFilterClause(query, params, "e");
    params.push(limit);
    const { rows } = await db.query<TurnRow>(
      `SELECT e.id, e.session_id, e.role, ${TURN_SOURCE}, e.content, e.occurred_at FROM memory_events e
       WHERE e.tenant_id = $1 AND e.user_id = $2 AND e.chain_state = 'pending'
         AND e.search_vector IS NOT NULL${extra}
       ORDER BY e.seq DESC LIMIT $${params.length}`,
      params,
    );
    return rows.map(toTurn);
  },
};
