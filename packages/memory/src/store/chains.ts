import type { SqlExecutor } from "@atrium/kit";
import type { ExtractedEntity, ExtractedRelation } from "../chains/text-analysis.js";
import type { Scope } from "../domain.js";

export type ChainStatus = "open" | "closed" | "archived";

export interface ChainRecord {
  id: string;
  scope: Scope;
  sessionId: string;
  status: ChainStatus;
  topic: string;
  summary: string;
  content: string;
  metadata: Record<string, string>;
  eventIds: string[];
  workflowId: string | null;
  embedding: number[];
  /** The embedder (its `model`) that made `embedding`. */
  embeddingModel: string;
  userVectorSum: number[] | null;
  analysisMethod: "llm" | "extractive";
  entities: ExtractedEntity[];
  relations: ExtractedRelation[];
  importance: number;
  density: number;
  quality: number;
  recallStrength: number;
  accessCount: number;
  lastAccessAt: Date;
  lastStrengthenedAt: Date | null;
  heat: number | null;
  promotedAt: Date | null;
  firstEventAt: Date;
  lastEventAt: Date;
}

interface ChainRow {
  id: string;
  tenant_id: string;
  user_id: string;
  agent_id: string;
  session_id: string;
  status: ChainStatus;
  topic: string;
  summary: string;
  content: string;
  metadata: Record<string, string>;
  event_ids: string[];
  workflow_id: string | null;
  embedding: number[];
  embedding_model: string;
  user_vector_sum: number[] | null;
  analysis_method: "llm" | "extractive";
  entities: ExtractedEntity[];
  relations: ExtractedRelation[];
  importance: number;
  density: number;
  quality: number;
  recall_strength: number;
  access_count: number;
  last_access_at: Date;
  last_strengthened_at: Date | null;
  heat: number | null;
  promoted_at: Date | null;
  first_event_at: Date;
  last_event_at: Date;
}

const toChain = (r: ChainRow): ChainRecord => ({
  id: r.id,
  scope: { tenantId: r.tenant_id, userId: r.user_id, agentId: r.agent_id },
  sessionId: r.session_id,
  status: r.status,
  topic: r.topic,
  summary: r.summary,
  content: r.content,
  metadata: r.metadata,
  eventIds: r.event_ids,
  workflowId: r.workflow_id,
  embedding: r.embedding.map(Number),
  embeddingModel: r.embedding_model,
  userVectorSum: r.user_vector_sum?.map(Number) ?? null,
  analysisMethod: r.analysis_method,
  entities: r.entities,
  relations: r.relations,
  importance: Number(r.importance),
  density: Number(r.density),
  quality: Number(r.quality),
  recallStrength: Number(r.recall_strength),
  accessCount: r.access_count,
  lastAccessAt: r.last_access_at,
  lastStrengthenedAt: r.last_strengthened_at,
  heat: r.heat === null ? null : Number(r.heat),
  promotedAt: r.promoted_at,
  firstEventAt: r.first_event_at,
  lastEventAt: r.last_event_at,
});

/** Columns a chain page needs; skips the vectors and the full text. */
const PAGE_COLUMNS =
  "id, tenant_id, user_id, agent_id, session_id, status, topic, summary, '' AS content, metadata, event_ids, workflow_id, '{}'::real[] AS embedding, embedding_model, NULL::real[] AS user_vector_sum, analysis_method, entities, relations, importance, density, quality, recall_strength, access_count, last_access_at, last_strengthened_at, heat, promoted_at, first_event_at, last_event_at";

/** Chain rows. Every function takes the executor, so callers compose them into transactions. */
export const chainStore = {
  async save(db: SqlExecutor, c: ChainRecord): Promise<void> {
    await db.query(
      `INSERT INTO memory_chains (id, tenant_id, user_id, agent_id, session_id, status, topic, summary,
         content, metadata, event_ids, workflow_id, embedding, user_vector_sum, analysis_method, entities,
         relations, importance, density, quality, recall_strength, access_count, last_access_at,
         last_strengthened_at, heat, promoted_at, first_event_at, last_event_at, embedding_model)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb, $11::uuid[], $12, $13::real[], $14::real[],
         $15, $16::jsonb, $17::jsonb, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29)
       ON CONFLICT (id) DO UPDATE SET status = EXCLUDED.status, topic = EXCLUDED.topic,
         summary = EXCLUDED.summary, content = EXCLUDED.content, metadata = EXCLUDED.metadata,
         event_ids = EXCLUDED.event_ids, workflow_id = EXCLUDED.workflow_id,
         embedding = EXCLUDED.embedding, embedding_model = EXCLUDED.embedding_model,
         user_vector_sum = EXCLUDED.user_vector_sum,
         analysis_method = EXCLUDED.analysis_method, entities = EXCLUDED.entities,
         relations = EXCLUDED.relations, importance = EXCLUDED.importance, density = EXCLUDED.density,
         quality = EXCLUDED.quality, promoted_at = EXCLUDED.promoted_at,
         first_event_at = EXCLUDED.first_event_at, last_event_at = EXCLUDED.last_event_at,
         saved_seq = nextval('memory_chains_saved_seq'), updated_at = now()`,
      [
        c.id,
        c.scope.tenantId,
        c.scope.userId,
        c.scope.agentId,
        c.sessionId,
        c.status,
        c.topic,
        c.summary,
        c.content,
        JSON.stringify(c.metadata),
        c.eventIds,
        c.workflowId,
        c.embedding,
        c.userVectorSum,
        c.analysisMethod,
        JSON.stringify(c.entities),
        JSON.stringify(c.relations),
        c.importance,
        c.density,
        c.quality,
        c.recallStrength,
        c.accessCount,
        c.lastAccessAt,
        c.lastStrengthenedAt,
        c.heat,
        c.promotedAt,
        c.firstEventAt,
        c.lastEventAt,
        c.embeddingModel,
      ],
    );
  },

  async remove(db: SqlExecutor, id: string): Promise<void> {
    await db.query("DELETE FROM memory_chains WHERE id = $1", [id]);
  },

  async open(db: SqlExecutor, scope: Scope): Promise<ChainRecord | undefined> {
    const { rows } = await db.query<ChainRow>(
      `SELECT * FROM memory_chains WHERE tenant_id = $1 AND user_id = $2 AND agent_id = $3 AND status = 'open'`,
      [scope.tenantId, scope.userId, scope.agentId],
    );
    return rows[0] ? toChain(rows[0]) : undefined;
  },

  async byIds(db: SqlExecutor, ids: string[], full = false): Promise<ChainRecord[]> {
    if (ids.length === 0) return [];
    const { rows } = await db.query<ChainRow>(
      `SELECT ${full ? "*" : PAGE_COLUMNS} FROM memory_chains WHERE id = ANY($1::uuid[])`,
      [ids],
    );
    const byId = new Map(rows.map((r) => [r.id, toChain(r)]));
    return ids.flatMap((id) => byId.get(id) ?? []);
  },

  /**
   * The scope's most recent chains, newest first. Chains whose newest messages carry the same
   * time (a client that stores a whole session with its date) come in the order they last took
   * a message: the chain check reads messages in the order they were stored and saves a chain
   * as it grows, so the one saved last holds the latest of them (`saved_seq`).
   */
  async recent(db: SqlExecutor, scope: Scope, limit: number): Promise<ChainRecord[]> {
    const { rows } = await db.query<ChainRow>(
      `SELECT ${PAGE_COLUMNS} FROM memory_chains
       WHERE tenant_id = $1 AND user_id = $2 AND agent_id = $3 AND status <> 'archived'
       ORDER BY last_event_at DESC, saved_seq DESC, id LIMIT $4`,
      [scope.tenantId, scope.userId, scope.agentId, limit],
    );
    return rows.map(toChain);
  },

  /** A user's chains over all agents, archived ones included, newest first. */
  async ofUser(
    db: SqlExecutor,
    owner: { tenantId: string; userId: string },
    limit: number,
  ): Promise<ChainRecord[]> {
    const { rows } = await db.query<ChainRow>(
      `SELECT ${PAGE_COLUMNS} FROM memory_chains WHERE tenant_id = $1 AND user_id = $2
       ORDER BY last_event_at DESC, saved_seq DESC, id LIMIT $3`,
      [owner.tenantId, owner.userId, limit],
    );
    return rows.map(toChain);
  },

  /** Open chains whose last event is older than `before`: conversations that went quiet. */
  async idleOpen(db: SqlExecutor, before: Date, limit: number): Promise<ChainRecord[]> {
    const { rows } = await db.query<ChainRow>(
      `SELECT * FROM memory_chains WHERE status = 'open' AND last_event_at < $1 ORDER BY last_event_at LIMIT $2`,
      [before, limit],
    );
    return rows.map(toChain);
  },

  /** Closed chains not yet in the graph, locked so that two instances never promote one twice. */
  async unpromoted(db: SqlExecutor, limit: number): Promise<ChainRecord[]> {
    const { rows } = await db.query<ChainRow>(
      `SELECT ${PAGE_COLUMNS} FROM memory_chains WHERE status = 'closed' AND promoted_at IS NULL
       ORDER BY created_at LIMIT $1 FOR UPDATE SKIP LOCKED`,
      [limit],
    );
    return rows.map(toChain);
  },

  /** Chains not accessed since `before`: the archiver's candidates. */
  async idleSince(db: SqlExecutor, before: Date, limit: number): Promise<ChainRecord[]> {
    const { rows } = await db.query<ChainRow>(
      `SELECT ${PAGE_COLUMNS} FROM memory_chains WHERE status = 'closed' AND last_access_at < $1
       ORDER BY last_access_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
      [before, limit],
    );
    return rows.map(toChain);
  },

  async setHeat(
    db: SqlExecutor,
    updates: { id: string; heat: number; promoted?: boolean; archived?: boolean }[],
  ) {
    if (updates.length === 0) return;
    await db.query(
      `UPDATE memory_chains c SET heat = u.heat,
         promoted_at = CASE WHEN u.promoted THEN now() ELSE c.promoted_at END,
         status = CASE WHEN u.archived THEN 'archived' ELSE c.status END,
         archived_at = CASE WHEN u.archived THEN now() ELSE c.archived_at END
       FROM unnest($1::uuid[], $2::float8[], $3::bool[], $4::bool[]) AS u(id, heat, promoted, archived)
       WHERE c.id = u.id`,
      [
        updates.map((u) => u.id),
        updates.map((u) => u.heat),
        updates.map((u) => u.promoted ?? false),
        updates.map((u) => u.archived ?? false),
      ],
    );
  },

  /** Writes recall state computed by `recordAccess` (heat.ts). */
  async setAccess(
    db: SqlExecutor,
    updates: {
      id: string;
      recallStrength: number;
      lastAccessAt: Date;
      lastStrengthenedAt: Date | null;
    }[],
  ) {
    if (updates.length === 0) return;
    await db.query(
      `UPDATE memory_chains c SET recall_strength = u.s, last_access_at = u.la, last_strengthened_at = u.ls,
         access_count = c.access_count + 1
       FROM unnest($1::uuid[], $2::float8[], $3::timestamptz[], $4::timestamptz[]) AS u(id, s, la, ls)
       WHERE c.id = u.id`,
      [
        updates.map((u) => u.id),
        updates.map((u) => u.recallStrength),
        updates.map((u) => u.lastAccessAt),
        updates.map((u) => u.lastStrengthenedAt),
      ],
    );
  },
};
