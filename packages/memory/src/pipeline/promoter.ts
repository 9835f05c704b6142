import type { Sql } from "@atrium/kit";
import { DEFAULT_MAX_GAP_MS } from "../chains/continuity.js";
import { ARCHIVE_IDLE_MS, heat, PROMOTE_HEAT, shouldArchive } from "../chains/heat.js";
import type { Scope } from "../domain.js";
import { analyseGraph } from "../graph/analytics.js";
import { chainStore } from "../store/chains.js";
import { graphStore } from "../store/graph.js";
import type { VectorSearch } from "../store/vector-search.js";
import type { ChainCheckWorker } from "./chain-check-worker.js";

export interface PromoterOptions {
  sql: Sql;
  worker: ChainCheckWorker;
  vectorSearch: VectorSearch;
  /** Open chains quiet for this long are closed first; default the continuity time gap. */
  idleCloseMs?: number;
  /** Chains per transaction; default 200. */
  batchSize?: number;
  /** Told the scopes whose chains the archiver took out of the recent pages. */
  onChainsChanged?: (scopes: Scope[]) => Promise<void>;
  now?: () => Date;
}

export interface CycleReport {
  closed: number;
  promoted: number;
  archived: number;
  graphsAnalysed: number;
}

/**
 * Moves memory along: closes chains whose conversation went quiet, promotes hot chains
 * (heat ≥ 0.3) into the long-term graph, archives cold idle ones, and recomputes communities and
 * bridge scores of the graphs that changed.
 */
export function createPromoter(options: PromoterOptions) {
  const { sql, worker, vectorSearch } = options;
  const now = options.now ?? (() => new Date());
  const batchSize = options.batchSize ?? 200;
  let running: Promise<CycleReport> | undefined;

  async function promoteChains(): Promise<number> {
    let promoted = 0;
    for (;;) {
      const { done, count } = await sql.transaction(async (tx) => {
        const chains = await chainStore.unpromoted(tx, batchSize);
        const at = now();
        const updates = [];
        let count = 0;
        for (const chain of chains) {
          const h = heat(chain, at);
          const promote = h >= PROMOTE_HEAT;
          if (promote) {
            await graphStore.promote(tx, chain.scope, chain.id, chain);
            count++;
          }
          updates.push({ id: chain.id, heat: h, promoted: promote });
        }
        await chainStore.setHeat(tx, updates);
        return { done: chains.length < batchSize || count === 0, count };
      });
      promoted += count;
      if (done) return promoted;
    }
  }

  async function archiveChains(): Promise<number> {
    const archived = await sql.transaction(async (tx) => {
      const at = now();
      const chains = await chainStore.idleSince(
        tx,
        new Date(at.getTime() - ARCHIVE_IDLE_MS),
        batchSize * 5,
      );
      const cold = chains.filter((c) => shouldArchive(c, at));
      await chainStore.setHeat(
        tx,
        cold.map((c) => ({ id: c.id, heat: heat(c, at), archived: true })),
      );
      await vectorSearch.remove(
        tx,
        cold.map((c) => c.id),
      );
      return cold;
    });
    if (archived.length > 0) await options.onChainsChanged?.(archived.map((c) => c.scope));
    return archived.length;
  }

  async function runGraphAnalytics(): Promise<number> {
    const stale = await graphStore.staleGraphs(sql);
    for (const owner of stale) {
      const startedAt = now();
      const { nodes, edges } = await graphStore.load(sql, owner);
      const results = analyseGraph(nodes, edges);
      await graphStore.saveAnalytics(
        sql,
        owner,
        [...results.entries()].map(([id, r]) => ({ id, ...r })),
        startedAt,
      );
    }
    return stale.length;
  }

  async function cycle(): Promise<CycleReport> {
    const closed = await worker.closeIdle(options.idleCloseMs ?? DEFAULT_MAX_GAP_MS);
    const promoted = await promoteChains();
    const archived = await archiveChains();
    const graphsAnalysed = await runGraphAnalytics();
    await vectorSearch.refreshStatistics();
    return { closed, promoted, archived, graphsAnalysed };
  }

  return {
    /** One full cycle; a call while one runs joins it instead of starting a second. */
    runCycle(): Promise<CycleReport> {
      running ??= cycle().finally(() => {
        running = undefined;
      });
      return running;
    },

    /** Resolves when no cycle is running (shutdown waits for it before closing the stores). */
    async idle(): Promise<void> {
      await running?.catch(() => undefined);
    },
  };
}

export type Promoter = ReturnType<typeof createPromoter>;
