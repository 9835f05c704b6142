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

/** A turn as `TURN_COLUMNS` selects it. */
export interface TurnRow {
  id: string;
  chain_id: string | null;
  session_id: string;
  role: "user" | "agent";
  source: EventSource;
  content: string;
  occurred_at: Date;
}

/** A turn's source as a column: rows stored before sources were recorded read as their role. */
export const TURN_SOURCE = "coalesce(e.source, e.role) AS source";

/** The columns of a turn of `memory_events e`, in the shape of TurnRow. */
export const TURN_COLUMNS = `e.id, e.chain_id, e.session_id, e.role, ${TURN_SOURCE}, e.content, e.occurred_at`;

/** A selected turn, with the chain it joined once its chain check is done. */
export const toTurn = (r: TurnRow): Turn & { chainId?: string } => ({
  eventId: r.id,
  ...(r.chain_id ? { chainId: r.chain_id } : {}),
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
    const { rows } = await db.query<TurnRow & { of_chain: string }>(
      `SELECT c.id AS of_chain, ${TURN_COLUMNS}
       FROM memory_chains c
       JOIN memory_events e ON e.id = ANY(c.event_ids)
       WHERE c.id = ANY($3::uuid[]) AND c.tenant_id = $1 AND c.user_id = $2
         AND e.search_vector IS NOT NULL
       ORDER BY e.seq`,
      [owner.tenantId, owner.userId, chainIds],
    );
    const byChain = new Map<string, Turn[]>();
    for (const row of rows) {
      const turns = byChain.get(row.of_chain) ?? [];
      turns.push(toTurn(row));
      byChain.set(row.of_chain, turns);
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
      `SELECT ${TURN_COLUMNS}
       FROM memory_events e
       WHERE e.id = ANY($3::uuid[]) AND e.tenant_id = $1 AND e.user_id = $2`,
      [owner.tenantId, owner.userId, ids],
    );
    const byId = new Map(rows.map((r) => [r.id, toTurn(r)]));
    return ids.flatMap((id) => byId.get(id) ?? []);
  },

  /**
   * The user's newest messages, newest first, whether their chain check has run or not: what a
   * search ranks by meaning beside what matched its words, so that a turn is found from the
   * moment its write was acknowledged, on every instance, and found the same once its page is
   * written (read-your-writes).
   */
  async newest(
    db: SqlExecutor,
    query: { tenantId: string; userId: string } & ScopeFilter,
    limit: number,
  ): Promise<Turn[]> {
    const params: unknown[] = [query.tenantId, query.userId];
    const extra = scopeFilterClause(query, params, "e");
    params.push(limit);
    const { rows } = await db.query<TurnRow>(
      `SELECT ${TURN_COLUMNS} FROM memory_events e
       WHERE e.tenant_id = $1 AND e.user_id = $2 AND e.search_vector IS NOT NULL${extra}
       ORDER BY e.seq DESC LIMIT $${params.length}`,
      params,
    );
    return rows.map(toTurn);
  },
};
