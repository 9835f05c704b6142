import { createPeriodicPass } from "@atrium/kit";
import type { BrokerContext } from "../broker-context.js";
import type { ConnectionRecord } from "./connection-record.js";
import { connectionStore } from "./connection-store.js";
import type { TokenRefresher } from "./token-refresher.js";

export interface RefreshLoopOptions {
  /** Pause between passes when the last pass found nothing more to do. */
  intervalMs: number;
  /** Rows claimed per pass. */
  batchSize: number;
  /** Refreshes running at once on this instance. */
  concurrency: number;
}

export interface RefreshPassResult {
  claimed: number;
  refreshed: number;
  failed: number;
}

export interface RefreshLoop {
  /** One pass: claims due connections with leases and refreshes them. */
  runOnce(): Promise<RefreshPassResult>;
  start(): void;
  /** Stops scheduling and waits for the pass in progress. */
  stop(): Promise<void>;
}

/**
 * Background refresh. Claims use `FOR UPDATE SKIP LOCKED` and a lease column in one statement,
 * so instances sharing a database split the due rows between them and a row leased by one
 * instance is invisible to the others until the lease is released or expires.
 */
export function createRefreshLoop(
  ctx: BrokerContext,
  refresher: TokenRefresher,
  options: RefreshLoopOptions,
): RefreshLoop {
  async function claimDue(): Promise<ConnectionRecord[]> {
    return connectionStore.claimDue(
      ctx.sql,
      ctx.instanceId,
      ctx.settings.leaseSeconds,
      options.batchSize,
    );
  }

  async function runOnce(): Promise<RefreshPassResult> {
    const result: RefreshPassResult = { claimed: 0, refreshed: 0, failed: 0 };
    for (;;) {
      const rows = await claimDue();
      result.claimed += rows.length;
      let next = 0;
      const worker = async () => {
        while (next < rows.length) {
          const row = rows[next++];
          try {
            await refresher.refreshClaimed(row);
            result.refreshed++;
          } catch {
            // Already recorded on the row (attention, backoff) and logged by the refresher.
            result.failed++;
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(options.concurrency, rows.length) }, worker));
      // Set by stop() only, so a manual runOnce() still drains every due row.
      if (rows.length < options.batchSize || loop.stopping) return result;
    }
  }

  const loop = createPeriodicPass({
    intervalMs: options.intervalMs,
    run: () => runOnce(),
    onError: (error) => ctx.logger.error({ err: error }, "refresh pass failed"),
  });

  return { runOnce, start: loop.start, stop: loop.stop };
}
