import { randomUUID } from "node:crypto";
import type { SqlExecutor } from "@atrium/kit";
import type { Scope, SessionRecord } from "../domain.js";

interface SessionRow {
  id: string;
  tenant_id: string;
  user_id: string;
  agent_id: string;
  metadata: Record<string, string>;
  created_at: Date;
  updated_at: Date;
}

const toSession = (r: SessionRow): SessionRecord => ({
  id: r.id,
  tenantId: r.tenant_id,
  userId: r.user_id,
  agentId: r.agent_id,
  metadata: r.metadata,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface SessionStoreOptions {
  /** Sessions remembered in process; default 10,000. */
  cacheSize?: number;
}

/**
 * Sessions never change after creation (their scope is fixed), so every request's lookup can be
 * answered from a small in-process LRU after the first.
 */
export function createSessionStore(sql: SqlExecutor, options: SessionStoreOptions = {}) {
  const cacheSize = options.cacheSize ?? 10_000;
  const known = new Map<string, SessionRecord>();
  const remember = (session: SessionRecord) => {
    known.delete(session.id);
    known.set(session.id, session);
    if (known.size > cacheSize) known.delete(known.keys().next().value as string);
    return session;
  };

  return {
    async create(scope: Scope, metadata: Record<string, string>): Promise<SessionRecord> {
      const { rows } = await sql.query<SessionRow>(
        `INSERT INTO memory_sessions (id, tenant_id, user_id, agent_id, metadata)
         VALUES ($1, $2, $3, $4, $5::jsonb) RETURNING *`,
        [randomUUID(), scope.tenantId, scope.userId, scope.agentId, JSON.stringify(metadata)],
      );
      return remember(toSession(rows[0]));
    },

    /** Undefined for an unknown id, including one that is not a UUID at all. */
    async get(id: string): Promise<SessionRecord | undefined> {
      if (!UUID.test(id)) return undefined;
      const cached = known.get(id);
      if (cached) return remember(cached);
      const { rows } = await sql.query<SessionRow>("SELECT * FROM memory_sessions WHERE id = $1", [
        id,
      ]);
      return rows[0] ? remember(toSession(rows[0])) : undefined;
    },
  };
}

export type SessionStore = ReturnType<typeof createSessionStore>;
