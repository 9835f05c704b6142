import type { Logger, Sql } from "@atrium/kit";
import { recordAccess } from "../chains/heat.js";
import { type ChainRecord, chainStore } from "../store/chains.js";
import type { RecentPages } from "../store/recent-pages.js";

export interface ChainAccessOptions {
  sql: Sql;
  recentPages: RecentPages;
  logger: Logger;
  now: () => Date;
}

const TOUCH_INTERVAL_MS = 5 * 60_000;

/** Recall strengthens chains (heat): recorded best effort, off the request path. */
export function createChainAccess({ sql, recentPages, logger, now }: ChainAccessOptions) {
  const failed = (error: unknown) => logger.warn({ err: error }, "recording chain access failed");

  function touch(chains: ChainRecord[]): void {
    const at = now();
    // A chain read again within minutes has not cooled measurably; skipping the write keeps hot
    // reads (an agent polling its context) from turning into a stream of UPDATEs.
    const due = chains.filter((c) => at.getTime() - c.lastAccessAt.getTime() >= TOUCH_INTERVAL_MS);
    if (due.length === 0) return;
    const updates = due.map((c) => ({ id: c.id, ...recordAccess(c, at) }));
    chainStore
      .setAccess(sql, updates)
      // The cached pages still carry the old access time: without this, every read would
      // write again.
      .then(() => recentPages.invalidate(due.map((c) => c.scope)))
      .catch(failed);
  }

  return {
    touch,
    /** The same for chains known by id (search results): their rows are read off the path too. */
    touchIds(ids: string[]): void {
      if (ids.length === 0) return;
      chainStore.byIds(sql, ids).then(touch).catch(failed);
    },
  };
}
