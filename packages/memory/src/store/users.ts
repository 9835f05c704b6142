import type { SqlExecutor } from "@atrium/kit";

export interface UserSummary {
  userId: string;
  /** The agents the user has sessions with ("" for sessions that named none). */
  agents: string[];
  sessions: number;
  /** Null while the user's sessions hold no event. */
  lastEventAt: Date | null;
}

export interface UserSession {
  id: string;
  agentId: string;
  createdAt: Date;
}

/** Who has memory in a tenant, for the operator's view; sessions are where users appear first. */
export const userStore = {
  /** The tenant's users, most recently active first. */
  async list(db: SqlExecutor, tenantId: string, limit: number): Promise<UserSummary[]> {
    // The newest event of each scope is one step down the STM window's index; a user's last
    // event is the newest of those, so no user's whole history is read.
    const { rows } = await db.query<{
      user_id: string;
      agents: string[];
      sessions: number | string;
      last_event_at: Date | null;
    }>(
      `WITH scopes AS (
         SELECT user_id, agent_id, count(*) AS sessions FROM memory_sessions
         WHERE tenant_id = $1 GROUP BY user_id, agent_id
       )
       SELECT s.user_id, array_agg(s.agent_id) AS agents, sum(s.sessions) AS sessions,
         max(e.occurred_at) AS last_event_at
       FROM scopes s LEFT JOIN LATERAL (
         SELECT occurred_at FROM memory_events
         WHERE tenant_id = $1 AND user_id = s.user_id AND agent_id = s.agent_id
           AND superseded_by IS NULL
         ORDER BY seq DESC LIMIT 1
       ) e ON true
       GROUP BY s.user_id
       ORDER BY last_event_at DESC NULLS LAST, s.user_id LIMIT $2`,
      [tenantId, limit],
    );
    return rows.map((r) => ({
      userId: r.user_id,
      agents: [...r.agents].sort(),
      sessions: Number(r.sessions),
      lastEventAt: r.last_event_at,
    }));
  },

  /** The user's sessions, the newest `perAgent` with each agent, by agent then newest first. */
  async sessions(
    db: SqlExecutor,
    owner: { tenantId: string; userId: string },
    perAgent: number,
  ): Promise<UserSession[]> {
    const { rows } = await db.query<{ id: string; agent_id: string; created_at: Date }>(
      `SELECT id, agent_id, created_at FROM (
         SELECT id, agent_id, created_at,
           row_number() OVER (PARTITION BY agent_id ORDER BY created_at DESC, id) AS n
         FROM memory_sessions WHERE tenant_id = $1 AND user_id = $2
       ) s WHERE n <= $3 ORDER BY agent_id, created_at DESC, id`,
      [owner.tenantId, owner.userId, perAgent],
    );
    return rows.map((r) => ({ id: r.id, agentId: r.agent_id, createdAt: r.created_at }));
  },
};
