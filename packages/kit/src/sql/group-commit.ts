export interface GroupCommitOptions {
  /** Most requests written by one statement; default 200. */
  maxRequests?: number;
  /**
   * Least time between the starts of two writes; default 0 (the next write starts as soon as the
   * last one ended). Under a steady stream of requests this bounds the statements a second (each
   * a commit the database pays for) and waits at most this long to fill a batch; a write after an
   * idle spell, or with a full batch already waiting, starts at once.
   */
  minIntervalMs?: number;
}

export interface GroupCommit<Item, Result> {
  /** Writes `items` with whatever else is waiting; resolves with their results in order. */
  write(items: Item[]): Promise<Result[]>;
}

interface Waiting<Item, Result> {
  items: Item[];
  resolve: (results: Result[]) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit for many small writers: calls that arrive while a write is in flight are written
 * together by the next one, so a busy service sends one statement (one round trip, one commit)
 * per batch instead of one per request, and an idle one adds no wait at all. Each caller still
 * gets all of its own items or an error: when a batch fails, its requests are retried one by
 * one, so one bad request fails alone. DataLoader-style libraries batch reads per tick; none
 * keeps one write in flight with this failure isolation, hence this small one.
 */
export function createGroupCommit<Item, Result>(
  write: (items: Item[]) => Promise<Result[]>,
  options: GroupCommitOptions = {},
): GroupCommit<Item, Result> {
  const maxRequests = options.maxRequests ?? 200;
  const minIntervalMs = options.minIntervalMs ?? 0;
  let waiting: Waiting<Item, Result>[] = [];
  let writing = false;
  let lastStart = Number.NEGATIVE_INFINITY;

  async function writeOne(request: Waiting<Item, Result>) {
    try {
      request.resolve(await write(request.items));
    } catch (error) {
      request.reject(error);
    }
  }

  async function drain() {
    writing = true;
    while (waiting.length > 0) {
      const wait = lastStart + minIntervalMs - performance.now();
      if (wait > 0 && waiting.length < maxRequests) {
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
      lastStart = performance.now();
      const batch = waiting.slice(0, maxRequests);
      waiting = waiting.slice(batch.length);
      if (batch.length === 1) {
        await writeOne(batch[0]);
        continue;
      }
      try {
        const results = await write(batch.flatMap((r) => r.items));
        let offset = 0;
        for (const request of batch) {
          request.resolve(results.slice(offset, offset + request.items.length));
          offset += request.items.length;
        }
      } catch {
        for (const request of batch) await writeOne(request);
      }
    }
    writing = false;
  }

  return {
    write(items: Item[]): Promise<Result[]> {
      return new Promise<Result[]>((resolve, reject) => {
        waiting.push({ items, resolve, reject });
        // Deferred to the end of this round of I/O, so the requests read together join.
        if (!writing) {
          writing = true;
          setImmediate(() => void drain());
        }
      });
    },
  };
}
