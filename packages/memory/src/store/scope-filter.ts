/** The optional parts of a per-user query that narrow it. */
export interface ScopeFilter {
  /** Restricts to one agent's rows; absent: every agent of the user. */
  agentId?: string;
  /** Metadata equality filter: every pair must match. */
  filter?: Record<string, string>;
}

/** SQL conditions (` AND …`) for `query`'s agent and metadata filter, its values in `params`. */
export function scopeFilterClause(query: ScopeFilter, params: unknown[], alias: string): string {
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
