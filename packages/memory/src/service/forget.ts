import { randomUUID } from "node:crypto";
import { type BlobStore, internal, type Logger, type Sql } from "@atrium/kit";
import type { Scope } from "../domain.js";
import type { ChainCheckWorker } from "../pipeline/chain-check-worker.js";
import { chainStore } from "../store/chains.js";
import { type ErasureCounts, type ErasureTarget, erasureStore } from "../store/erasure.js";
import { graphStore } from "../store/graph.js";
import type { RecentPages } from "../store/recent-pages.js";
import type { VectorSearch } from "../store/vector-search.js";
import type { StmWindow } from "./stm-window.js";

export interface ForgetOptions {
  sql: Sql;
  worker: Pick<ChainCheckWorker, "rebuild">;
  vectorSearch: VectorSearch;
  window: Pick<StmWindow, "drop">;
  recentPages: Pick<RecentPages, "invalidate">;
  blobStore?: BlobStore;
  logger: Logger;
}

export interface ForgetRequest {
  target: ErasureTarget;
  /** Who asked, for the audit: the verified identity, or the session the call named. */
  requestedBy: string;
}

/**
 * Erases events and everything derived from them, in one transaction: the events and their
 * BM25 statistics, the idempotency records of the writes that stored them, their chains
 * (removed when nothing remains, else recomputed from what does, vectors included), the graph's
 * entities and edges that rested on those chains alone, and their payloads; then the cached
 * STM windows and recent pages of every agent of the user, on every instance (Redis tracking
 * evicts the near caches). Each erasure leaves an audit record with counts, never content.
 */
export function createForget(options: ForgetOptions) {
  const { sql, worker, vectorSearch, window, recentPages, blobStore, logger } = options;

  return async function forget({ target, requestedBy }: ForgetRequest) {
    const id = randomUUID();
    const { counts, scopes } = await sql.transaction(async (tx) => {
      const erased = await erasureStore.deleteEvents(tx, target);
      const erasedIds = erased.map((e) => e.id);
      const idempotencyRecordsErased = await erasureStore.deleteIdempotency(
        tx,
        target.tenantId,
        erasedIds,
      );
      const gone = new Set(erasedIds);
      const chains = await erasureStore.chainsOf(tx, target, erasedIds);
      const removed: string[] = [];
      const rebuilt = [];
      for (const chain of chains) {
        const remaining = await erasureStore.events(
          tx,
          chain.eventIds.filter((e) => !gone.has(e)),
        );
        if (remaining.length === 0) {
          await chainStore.remove(tx, chain.id);
          removed.push(chain.id);
        } else {
          rebuilt.push(await worker.rebuild(chain, remaining));
        }
      }
      await vectorSearch.remove(tx, removed);
      // The rebuilt chains leave the graph with the removed ones and, if they were in it, come
      // back with what their remaining turns say.
      const entitiesErased = await erasureStore.unpromote(tx, target, [
        ...removed,
        ...rebuilt.filter((c) => c.promotedAt).map((c) => c.id),
      ]);
      for (const chain of rebuilt) {
        await chainStore.save(tx, chain);
        if (chain.status !== "archived") await vectorSearch.upsert(tx, chain);
        if (chain.promotedAt) await graphStore.promote(tx, chain.scope, chain.id, chain);
      }
      let payloadsErased = 0;
      for (const uri of erased.flatMap((e) => (e.blobUri ? [e.blobUri] : []))) {
        if (!blobStore)
          throw internal("an erased event has a payload but no blob store is configured");
        // Before the commit: a payload that cannot be deleted keeps its event, and a retry
        // deletes both.
        await blobStore.delete(uri);
        payloadsErased++;
      }
      const counts: ErasureCounts = {
        eventsErased: erased.length,
        chainsErased: removed.length,
        chainsRebuilt: rebuilt.length,
        entitiesErased,
        payloadsErased,
        idempotencyRecordsErased,
      };
      await erasureStore.audit(tx, { id, target, requestedBy, counts });
      const { rows } = await tx.query<{ agent_id: string }>(
        `SELECT DISTINCT agent_id FROM memory_sessions WHERE tenant_id = $1 AND user_id = $2
         UNION SELECT DISTINCT agent_id FROM memory_chains WHERE tenant_id = $1 AND user_id = $2`,
        [target.tenantId, target.userId],
      );
      const agents = new Set([...rows.map((r) => r.agent_id), ...erased.map((e) => e.agentId)]);
      const scopes: Scope[] = [...agents]
        .filter((agentId) => target.kind !== "agent" || agentId === target.agentId)
        .map((agentId) => ({ tenantId: target.tenantId, userId: target.userId, agentId }));
      return { counts, scopes };
    });
    // After the commit, so that no read refills a cache from the rows being erased.
    await Promise.all([window.drop(scopes), recentPages.invalidate(scopes)]);
    logger.info(
      {
        erasure: id,
        tenantId: target.tenantId,
        userId: target.userId,
        ...(target.kind === "agent" ? { agentId: target.agentId } : {}),
        kind: target.kind,
        requestedBy,
        ...counts,
      },
      "memory erased",
    );
    return { id, counts };
  };
}

export type Forget = ReturnType<typeof createForget>;
