import { randomUUID } from "node:crypto";
import type { SqlExecutor } from "@atrium/kit";
import type { ChainAnalysis, EntityType } from "../chains/text-analysis.js";

export interface EntityRecord {
  id: string;
  name: string;
  type: string;
  mentions: number;
  community: number | null;
  bridgeScore: number | null;
  updatedAt: Date;
}

export interface EntityFact {
  relation: string;
  /** `out`: entity → other; `in`: other → entity. */
  direction: "out" | "in";
  other: string;
  confidence: number;
  weight: number;
}

interface EntityRow {
  id: string;
  name: string;
  name_key: string;
  type: string;
  mentions: number;
  community: number | null;
  bridge_score: number | null;
  updated_at: Date;
}

const toEntity = (r: EntityRow): EntityRecord => ({
  id: r.id,
  name: r.name,
  type: r.type,
  mentions: r.mentions,
  community: r.community,
  bridgeScore: r.bridge_score,
  updatedAt: r.updated_at,
});

export const entityKey = (name: string) => name.trim().toLowerCase().replace(/\s+/g, " ");

export const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

export interface UserGraph {
  tenantId: string;
  userId: string;
}

/** The long-term graph: entities and weighted, typed edges, per tenant and user. */
export const graphStore = {
  /**
   * Adds a chain's entities and relations. A repeated edge averages its confidence with the new
   * one and adds to its weight; a repeated entity counts one more mention.
   */
  async promote(
    db: SqlExecutor,
    owner: UserGraph,
    chainId: string,
    analysis: Pick<ChainAnalysis, "entities" | "relations">,
  ): Promise<void> {
    const types = new Map<string, { name: string; type: EntityType }>();
    for (const e of analysis.entities) types.set(entityKey(e.name), e);
    for (const r of analysis.relations) {
      for (const name of [r.subject, r.object]) {
        if (!types.has(entityKey(name))) types.set(entityKey(name), { name, type: "thing" });
      }
    }
    if (types.size === 0) return;
    const keys = [...types.keys()].sort();
    const { rows } = await db.query<{ id: string; name_key: string }>(
      `INSERT INTO memory_entities (id, tenant_id, user_id, name, name_key, type, source_chain_ids)
       SELECT u.id, $1, $2, u.name, u.name_key, u.type, ARRAY[$3::uuid]
       FROM unnest($4::uuid[], $5::text[], $6::text[], $7::text[]) AS u(id, name, name_key, type)
       ON CONFLICT (tenant_id, user_id, name_key) DO UPDATE SET
         mentions = memory_entities.mentions + 1,
         source_chain_ids = (SELECT array_agg(DISTINCT x) FROM unnest(memory_entities.source_chain_ids || EXCLUDED.source_chain_ids) AS x),
         type = CASE WHEN memory_entities.type = 'thing' THEN EXCLUDED.type ELSE memory_entities.type END,
         updated_at = now()
       RETURNING id, name_key`,
      [
        owner.tenantId,
        owner.userId,
        chainId,
        keys.map(() => randomUUID()),
        keys.map((k) => types.get(k)?.name ?? k),
        keys,
        keys.map((k) => types.get(k)?.type ?? "thing"),
      ],
    );
    const idByKey = new Map(rows.map((r) => [r.name_key, r.id]));
    const edges = new Map<string, { s: string; t: string; relation: string; confidence: number }>();
    for (const r of analysis.relations) {
      const s = idByKey.get(entityKey(r.subject));
      const t = idByKey.get(entityKey(r.object));
      if (!s || !t || s === t) continue;
      edges.set(`${s}\0${r.relation}\0${t}`, {
        s,
        t,
        relation: r.relation,
        confidence: r.confidence,
      });
    }
    if (edges.size === 0) return;
    const list = [...edges.values()];
    await db.query(
      `INSERT INTO memory_edges (tenant_id, user_id, source_id, target_id, relation, confidence, weight, source_chain_ids)
       SELECT $1, $2, u.s, u.t, u.relation, u.confidence, 1, ARRAY[$7::uuid]
       FROM unnest($3::uuid[], $4::uuid[], $5::text[], $6::float8[]) AS u(s, t, relation, confidence)
       ON CONFLICT (source_id, relation, target_id) DO UPDATE SET
         confidence = (memory_edges.confidence + EXCLUDED.confidence) / 2,
         weight = memory_edges.weight + EXCLUDED.weight,
         source_chain_ids = (SELECT array_agg(DISTINCT x) FROM unnest(memory_edges.source_chain_ids || EXCLUDED.source_chain_ids) AS x),
         updated_at = now()`,
      [
        owner.tenantId,
        owner.userId,
        list.map((e) => e.s),
        list.map((e) => e.t),
        list.map((e) => e.relation),
        list.map((e) => e.confidence),
        chainId,
      ],
    );
  },

  /** Entities of the user whose names occur in `text` as whole words. */
  async mentionedIn(
    db: SqlExecutor,
    owner: UserGraph,
    text: string,
    limit: number,
  ): Promise<EntityRecord[]> {
    const lower = text.toLowerCase();
    const { rows } = await db.query<EntityRow>(
      `SELECT id, name, name_key, type, mentions, community, bridge_score, updated_at FROM memory_entities
       WHERE tenant_id = $1 AND user_id = $2 AND length(name_key) >= 2 AND strpos($3, name_key) > 0
       ORDER BY mentions DESC, length(name_key) DESC LIMIT 200`,
      [owner.tenantId, owner.userId, lower],
    );
    return rows
      .filter((r) =>
        new RegExp(`(^|[^\\p{L}\\p{N}])${escapeRegExp(r.name_key)}($|[^\\p{L}\\p{N}])`, "u").test(
          lower,
        ),
      )
      .slice(0, limit)
      .map(toEntity);
  },

  async facts(db: SqlExecutor, entityId: string, limit: number): Promise<EntityFact[]> {
    const { rows } = await db.query<{
      relation: string;
      direction: "out" | "in";
      other: string;
      confidence: number;
      weight: number;
    }>(
      `SELECT e.relation, 'out' AS direction, t.name AS other, e.confidence, e.weight
         FROM memory_edges e JOIN memory_entities t ON t.id = e.target_id WHERE e.source_id = $1
       UNION ALL
       SELECT e.relation, 'in' AS direction, s.name AS other, e.confidence, e.weight
         FROM memory_edges e JOIN memory_entities s ON s.id = e.source_id WHERE e.target_id = $1
       ORDER BY weight DESC, confidence DESC, other LIMIT $2`,
      [entityId, limit],
    );
    return rows.map((r) => ({ ...r, confidence: Number(r.confidence), weight: Number(r.weight) }));
  },

  /** The user's entities, most mentioned first. */
  async entities(db: SqlExecutor, owner: UserGraph, limit: number): Promise<EntityRecord[]> {
    const { rows } = await db.query<EntityRow>(
      `SELECT id, name, name_key, type, mentions, community, bridge_score, updated_at FROM memory_entities
       WHERE tenant_id = $1 AND user_id = $2 ORDER BY mentions DESC, name_key LIMIT $3`,
      [owner.tenantId, owner.userId, limit],
    );
    return rows.map(toEntity);
  },

  /** One of the user's entities; undefined for an unknown id or another user's. */
  async entity(db: SqlExecutor, owner: UserGraph, id: string): Promise<EntityRecord | undefined> {
    const { rows } = await db.query<EntityRow>(
      `SELECT id, name, name_key, type, mentions, community, bridge_score, updated_at FROM memory_entities
       WHERE tenant_id = $1 AND user_id = $2 AND id::text = $3`,
      [owner.tenantId, owner.userId, id],
    );
    return rows[0] ? toEntity(rows[0]) : undefined;
  },

  /** The typed edges between the given entities of the user. */
  async edgesAmong(
    db: SqlExecutor,
    owner: UserGraph,
    entityIds: string[],
  ): Promise<{ from: string; to: string; relation: string }[]> {
    if (entityIds.length === 0) return [];
    const { rows } = await db.query<{ source_id: string; target_id: string; relation: string }>(
      `SELECT source_id, target_id, relation FROM memory_edges
       WHERE tenant_id = $1 AND user_id = $2
         AND source_id = ANY($3::uuid[]) AND target_id = ANY($3::uuid[])
       ORDER BY weight DESC, relation`,
      [owner.tenantId, owner.userId, entityIds],
    );
    return rows.map((r) => ({ from: r.source_id, to: r.target_id, relation: r.relation }));
  },

  /** Users whose graph changed since its last analysis. */
  async staleGraphs(db: SqlExecutor): Promise<UserGraph[]> {
    const { rows } = await db.query<{ tenant_id: string; user_id: string }>(
      `SELECT DISTINCT tenant_id, user_id FROM memory_entities
       WHERE analysed_at IS NULL OR updated_at > analysed_at`,
    );
    return rows.map((r) => ({ tenantId: r.tenant_id, userId: r.user_id }));
  },

  async load(db: SqlExecutor, owner: UserGraph) {
    const nodes = await db.query<{ id: string }>(
      "SELECT id FROM memory_entities WHERE tenant_id = $1 AND user_id = $2",
      [owner.tenantId, owner.userId],
    );
    const edges = await db.query<{ source_id: string; target_id: string; weight: number }>(
      "SELECT source_id, target_id, weight FROM memory_edges WHERE tenant_id = $1 AND user_id = $2",
      [owner.tenantId, owner.userId],
    );
    return {
      nodes: nodes.rows.map((r) => r.id),
      edges: edges.rows.map((r) => ({
        source: r.source_id,
        target: r.target_id,
        weight: Number(r.weight),
      })),
    };
  },

  async saveAnalytics(
    db: SqlExecutor,
    owner: UserGraph,
    results: { id: string; community: number; bridgeScore: number }[],
    analysedAt: Date,
  ): Promise<void> {
    await db.query(
      `UPDATE memory_entities e SET community = u.community, bridge_score = u.bridge, analysed_at = $5
       FROM unnest($1::uuid[], $2::int[], $3::int[]) AS u(id, community, bridge)
       WHERE e.id = u.id AND e.tenant_id = $4 AND e.user_id = $6`,
      [
        results.map((r) => r.id),
        results.map((r) => r.community),
        results.map((r) => r.bridgeScore),
        owner.tenantId,
        analysedAt,
        owner.userId,
      ],
    );
  },
};
