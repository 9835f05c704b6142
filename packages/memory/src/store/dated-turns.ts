import type { SqlExecutor } from "@atrium/kit";
import { type ScopeFilter, scopeFilterClause } from "./scope-filter.js";
import { TURN_COLUMNS, type Turn, type TurnRow, toTurn } from "./turns.js";

/**
 * The user's messages said between `from` and `to`, nearest to `near` first: where a question
 * that names a day looks for the turns said on it or speaking of it (retrieval/day-mentions.ts).
 */
export async function turnsSaidBetween(
  db: SqlExecutor,
  query: { tenantId: string; userId: string } & ScopeFilter,
  window: { from: Date; to: Date; near: Date },
  limit: number,
): Promise<(Turn & { chainId?: string })[]> {
  const params: unknown[] = [query.tenantId, query.userId, window.from, window.to];
  const extra = scopeFilterClause(query, params, "e");
  params.push(window.near, limit);
  const { rows } = await db.query<TurnRow>(
    `SELECT ${TURN_COLUMNS}
     FROM memory_events e
     WHERE e.tenant_id = $1 AND e.user_id = $2 AND e.occurred_at >= $3 AND e.occurred_at < $4
       AND e.search_vector IS NOT NULL${extra}
     ORDER BY abs(extract(epoch FROM e.occurred_at - $${params.length - 1}::timestamptz)), e.seq
     LIMIT $${params.length}`,
    params,
  );
  return rows.map(toTurn);
}
