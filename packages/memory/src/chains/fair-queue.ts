export interface FairQueueOptions {
  /** Tasks running at once, across all keys. */
  concurrency: number;
}

/**
 * Runs tasks with a shared concurrency limit, taking turns between keys (tenants): a key's next
 * task waits behind at most one task of every other key that has work, however many tasks
 * those keys queued. Written here because the queues at hand (piscina's, p-queue) are FIFO
 * across callers, which is what let one tenant's burst delay every other tenant.
 */
export function createFairQueue(options: FairQueueOptions) {
  const waiting = new Map<string, (() => void)[]>();
  /** Keys with waiting tasks, in turn order. */
  const turns: string[] = [];
  let running = 0;

  function next(): void {
    while (running < options.concurrency && turns.length > 0) {
      const key = turns.shift() as string;
      const tasks = waiting.get(key) as (() => void)[];
      const start = tasks.shift() as () => void;
      if (tasks.length > 0) turns.push(key);
      else waiting.delete(key);
      running++;
      start();
    }
  }

  return {
    /** Runs `task` when it is `key`'s turn and a slot is free. */
    run<T>(key: string, task: () => Promise<T>): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        const start = () => {
          task()
            .then(resolve, reject)
            .finally(() => {
              running--;
              next();
            });
        };
        const tasks = waiting.get(key);
        if (tasks) tasks.push(start);
        else {
          waiting.set(key, [start]);
          turns.push(key);
        }
        next();
      });
    },
    /** Tasks waiting for their turn. */
    waiting(): number {
      let count = 0;
      for (const tasks of waiting.values()) count += tasks.length;
      return count;
    },
  };
}

export type FairQueue = ReturnType<typeof createFairQueue>;

/** Runs an LLM call in its tenant's turn of `turns`, or at once without a queue. */
export const llmInTurn =
  (turns: FairQueue | undefined) =>
  <T>(tenantId: string | undefined, call: () => Promise<T>): Promise<T> =>
    turns ? turns.run(tenantId ?? "", call) : call();
