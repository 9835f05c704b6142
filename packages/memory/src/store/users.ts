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
    const { rows } = await db.query<{
      user_id: string;
      agents: string[];
      sessions: number | string;
      last_event_at: Date | null;
    }>(
      `SELECT s.user_id, array_agg(DISTINCT s.agent_id) AS agents, count(*) AS sessions,
         (SELECT max(e.occurred_at) FROM memory_events e
          WHERE e.tenant_id = s.tenant_id AND e.user_id = s.user_id) AS last_event_at
       FROM memory_sessions s WHERE s.tenant_id = $1
       GROUP BY s.tenant_id, s.user_id
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

  /** The user's sessions over all agents, newest first. */
  async sessions(
    db: SqlExecutor,
    owner: { tenantId: string; userId: string },
    limit: number,
  ): Promise<UserSession[]> {
    const { rows } = await db.query<{ id: string; agent_id: string; created_at: Date }>(
      `SELECT id, agent_id, created_at FROM memory_sessions WHERE tenant_id = $1 AND user_id = $2
       ORDER BY created_at DESC, id LIMIT $3`,
      [owner.tenantId, owner.userId, limit],
    );
    return rows.map((r) => ({ id: r.id, agentId: r.agent_id, createdAt: r.created_at }));
  },
};
