import { createPeriodicPass } from "../lifecycle/periodic-pass.js";

/** What one attempt came to; `lost` when the entry was handed back or its lease was lost. */
export type OutboxAttempt = "delivered" | "retrying" | "failed" | "lost";

/** The entries of one pass, by what their attempt came to. */
export interface OutboxPass {
  claimed: number;
  delivered: number;
  retrying: number;
  failed: number;
}

export interface OutboxDrainOptions<Entry> {
  /** Leases up to `limit` due entries to this instance. */
  claim(limit: number): Promise<Entry[]>;
  /**
   * Attempts one entry and records the attempt. `signal` aborts when the drain stops: the
   * entry is then handed back unattempted (`lost`), so that it stays due for the next host.
   */
  deliver(entry: Entry, signal: AbortSignal): Promise<OutboxAttempt>;
  /** Entries claimed at once; a full batch is followed by another claim in the same pass. */
  batchSize: number;
  pollMs: number;
  /** Runs at the start of each pass (a sweep of settled entries, say). */
  beforePass?: () => Promise<void>;
  /** A pass that threw; the next one runs all the same. */
  onError(error: unknown): void;
}

export interface OutboxDrain {
  /** One pass: claims due entries until none is left and delivers them. */
  runOnce(): Promise<OutboxPass>;
  start(): void;
  /** Stops polling, aborts the attempts in flight (their entries stay due) and waits for the pass. */
  stop(): Promise<void>;
}

/**
 * The drain loop of a webhook outbox (the broker's deliveries, the chat host's step events):
 * every `pollMs`, claim a batch, attempt its entries at once, claim again while batches come
 * back full. What an entry is, how it is claimed, signed and sent, and how an attempt is
 * recorded belong to the caller.
 */
export function createOutboxDrain<Entry>(options: OutboxDrainOptions<Entry>): OutboxDrain {
  const { batchSize } = options;
  let abort = new AbortController();

  async function runOnce(): Promise<OutboxPass> {
    const pass: OutboxPass = { claimed: 0, delivered: 0, retrying: 0, failed: 0 };
    await options.beforePass?.();
    while (!abort.signal.aborted) {
      const signal = abort.signal;
      const entries = await options.claim(batchSize);
      pass.claimed += entries.length;
      await Promise.all(
        entries.map(async (entry) => {
          const attempt = await options.deliver(entry, signal);
          if (attempt !== "lost") pass[attempt]++;
        }),
      );
      if (entries.length < batchSize) break;
    }
    return pass;
  }

  const loop = createPeriodicPass({
    intervalMs: options.pollMs,
    run: () => runOnce(),
    onError: options.onError,
  });

  return {
    runOnce,
    start() {
      if (abort.signal.aborted) abort = new AbortController();
      loop.start();
    },
    async stop() {
      abort.abort();
      await loop.stop();
    },
  };
}
