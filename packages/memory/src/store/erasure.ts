import type { SqlExecutor } from "@atrium/kit";
import type { StmEvent } from "../domain.js";
import { type ChainRecord, chainStore } from "./chains.js";
import { toStmEvent } from "./events.js";

/** What is erased: given events of a user, or a whole scope (one agent of a user, or the user). */
export type ErasureTarget =
  | { kind: "events"; tenantId: string; userId: string; eventIds: string[] }
  | { kind: "agent"; tenantId: string; userId: string; agentId: string }
  | { kind: "user"; tenantId: string; userId: string };

export interface ErasedEvent {
  id: string;
  agentId: string;
  blobUri: string | null;
}

export interface ErasureCounts {
  eventsErased: number;
  chainsErased: number;
  chainsRebuilt: number;
  entitiesErased: number;
  payloadsErased: number;
  idempotencyRecordsErased: number;
}

function targetClause(target: ErasureTarget, params: unknown[], alias: string): string {
  params.push(target.tenantId, target.userId);
  let clause = `${alias}.tenant_id = $${params.length - 1} AND ${alias}.user_id = $${params.length}`;
  if (target.kind === "agent") {
    params.push(target.agentId);
    clause += ` AND ${alias}.agent_id = $${params.length}`;
  }
  if (target.kind === "events") {
    params.push(target.eventIds);
    clause += ` AND ${alias}.id = ANY($${params.length}::uuid[])`;
  }
  return clause;
}

/** The SQL of an erasure, every statement inside the caller's transaction. */
export const erasureStore = {
  /**
   * Deletes the events and takes them out of their user's BM25 statistics in the same
   * statement; lexemes no message holds any more are deleted (a word is content too). Waits
   * for a chain check holding the events, so the chains read next include what it wrote.
   */
  async deleteEvents(tx: SqlExecutor, target: ErasureTarget): Promise<ErasedEvent[]> {
    const params: unknown[] = [];
    const where = targetClause(target, params, "e");
    const { rows } = await tx.query<{ id: string; agent_id: string; blob_uri: string | null }>(
      `WITH gone AS (
         DELETE FROM memory_events e WHERE ${where}
         RETURNING e.id, e.tenant_id, e.user_id, e.agent_id, e.blob_uri, e.chain_state, e.search_vector
       ), counted AS (
         SELECT tenant_id, user_id, search_vector FROM gone
         WHERE chain_state = 'done' AND search_vector IS NOT NULL
       ), lexemes AS (
         UPDATE memory_lexicon l SET documents = l.documents - c.n
         FROM (SELECT tenant_id, user_id, t.lexeme, count(*) AS n
               FROM counted, unnest(tsvector_to_array(search_vector)) AS t(lexeme)
               GROUP BY tenant_id, user_id, t.lexeme) AS c
         WHERE l.tenant_id = c.tenant_id AND l.user_id = c.user_id AND l.lexeme = c.lexeme
       ), totals AS (
         UPDATE memory_lexicon_totals t SET documents = t.documents - c.n, lexemes = t.lexemes - c.len
         FROM (SELECT tenant_id, user_id, count(*) AS n, sum(length(search_vector)) AS len
               FROM counted GROUP BY tenant_id, user_id) AS c
         WHERE t.tenant_id = c.tenant_id AND t.user_id = c.user_id
       )
       SELECT id, agent_id, blob_uri FROM gone`,
      params,
    );
    await tx.query(
      "DELETE FROM memory_lexicon WHERE tenant_id = $1 AND user_id = $2 AND documents <= 0",
      [target.tenantId, target.userId],
    );
    await tx.query(
      "DELETE FROM memory_lexicon_totals WHERE tenant_id = $1 AND user_id = $2 AND documents <= 0",
      [target.tenantId, target.userId],
    );
    return rows.map((r) => ({ id: r.id, agentId: r.agent_id, blobUri: r.blob_uri }));
  },

  /** Records of idempotent writes that stored any of the events: a retry stores anew. */
  async deleteIdempotency(tx: SqlExecutor, tenantId: string, eventIds: string[]): Promise<number> {
    if (eventIds.length === 0) return 0;
    const { rowCount } = await tx.query(
      "DELETE FROM memory_idempotency WHERE tenant_id = $1 AND event_ids && $2::uuid[]",
      [tenantId, eventIds],
    );
    return rowCount ?? 0;
  },

  /** The chains holding any of the events, or every chain of a scope, locked for the rewrite. */
  async chainsOf(
    tx: SqlExecutor,
    target: ErasureTarget,
    eventIds: string[],
  ): Promise<ChainRecord[]> {
    const params: unknown[] = [target.tenantId, target.userId];
    let extra = "";
    if (target.kind === "agent") {
      params.push(target.agentId);
      extra = " AND agent_id = $3";
    } else if (target.kind === "events") {
      params.push(eventIds);
      extra = " AND event_ids && $3::uuid[]";
    }
    const { rows } = await tx.query<{ id: string }>(
      `SELECT id FROM memory_chains WHERE tenant_id = $1 AND user_id = $2${extra}
       ORDER BY id FOR UPDATE`,
      params,
    );
    return chainStore.byIds(
      tx,
      rows.map((r) => r.id),
      true,
    );
  },

  /** Events that remain, in the order they were stored. */
  async events(tx: SqlExecutor, ids: string[]): Promise<StmEvent[]> {
    if (ids.length === 0) return [];
    const { rows } = await tx.query<Parameters<typeof toStmEvent>[0]>(
      `SELECT id, session_id, role, type, content, metadata, blob_uri, blob_mime_type, occurred_at,
         coalesced_count
       FROM memory_events WHERE id = ANY($1::uuid[]) ORDER BY seq`,
      [ids],
    );
    return rows.map(toStmEvent);
  },

  /**
   * Takes the chains out of the user's graph: from the provenance of every entity and edge, and
   * deletes the entities and edges that rested on them alone (with a whole user, all of them).
   * Returns how many entities went.
   */
  async unpromote(tx: SqlExecutor, target: ErasureTarget, chainIds: string[]): Promise<number> {
    const owner = [target.tenantId, target.userId];
    if (target.kind === "user") {
      await tx.query("DELETE FROM memory_edges WHERE tenant_id = $1 AND user_id = $2", owner);
      const { rowCount } = await tx.query(
        "DELETE FROM memory_entities WHERE tenant_id = $1 AND user_id = $2",
        owner,
      );
      return rowCount ?? 0;
    }
    if (chainIds.length === 0) return 0;
    const params = [...owner, chainIds];
    const restsOnly = `tenant_id = $1 AND user_id = $2 AND source_chain_ids <> '{}'
      AND source_chain_ids <@ $3::uuid[]`;
    await tx.query(`DELETE FROM memory_edges WHERE ${restsOnly}`, params);
    // Edges to a deleted entity go with it (ON DELETE CASCADE).
    const { rowCount } = await tx.query(`DELETE FROM memory_entities WHERE ${restsOnly}`, params);
    const without = `source_chain_ids = array(SELECT x FROM unnest(source_chain_ids) AS x
      WHERE NOT (x = ANY($3::uuid[])))`;
    const touching = "tenant_id = $1 AND user_id = $2 AND source_chain_ids && $3::uuid[]";
    await tx.query(
      `UPDATE memory_entities SET ${without}, updated_at = now(),
         mentions = greatest(1, mentions - (SELECT count(*) FROM unnest(source_chain_ids) AS x
                                            WHERE x = ANY($3::uuid[])))
       WHERE ${touching}`,
      params,
    );
    await tx.query(
      `UPDATE memory_edges SET ${without}, updated_at = now() WHERE ${touching}`,
      params,
    );
    return rowCount ?? 0;
  },

  /** The audit record: who asked, which scope, how much went; never what was said. */
  async audit(
    tx: SqlExecutor,
    record: { id: string; target: ErasureTarget; requestedBy: string; counts: ErasureCounts },
  ): Promise<void> {
    const { target, counts } = record;
    await tx.query(
      `INSERT INTO memory_erasures (id, tenant_id, user_id, agent_id, kind, requested_by,
         events_erased, chains_erased, chains_rebuilt, entities_erased, payloads_erased,
         idempotency_records_erased)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
      [
        record.id,
        target.tenantId,
        target.userId,
        target.kind === "agent" ? target.agentId : null,
        target.kind,
        record.requestedBy,
        counts.eventsErased,
        counts.chainsErased,
        counts.chainsRebuilt,
        counts.entitiesErased,
        counts.payloadsErased,
        counts.idempotencyRecordsErased,
      ],
    );
  },
};
