import { setTimeout as sleep } from "node:timers/promises";

export interface WriteResult {
  n: number;
  key: string;
  startedAt: number;
  latencyMs: number;
  status: number;
  retryAfter: string | null;
}

export interface WriteLoadOptions {
  /** POSTs here with `{user_message, agent_response}`. */
  url: string;
  /** One write starts every `intervalMs` (a bounded load, not a flood). */
  intervalMs: number;
  /** `${prefix}-${n}` is both the message and the idempotency key. */
  prefix: string;
  /** Per-request timeout; a write still unanswered then counts as status 0. */
  timeoutMs?: number;
}

/** Sends one write of the load again, with its key, as a client retrying it would. */
export async function retryWrite(url: string, key: string): Promise<number> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", "idempotency-key": key },
    body: JSON.stringify({ user_message: key, agent_response: `re ${key}` }),
    signal: AbortSignal.timeout(5000),
  });
  await res.arrayBuffer();
  return res.status;
}

/** A fixed-rate write load; `stop` waits for the writes in flight and returns every outcome. */
export function startWriteLoad(options: WriteLoadOptions) {
  const results: WriteResult[] = [];
  const inFlight = new Set<Promise<void>>();
  let stopped = false;
  let n = 0;
  const write = async (i: number) => {
    const key = `${options.prefix}-${i}`;
    const startedAt = performance.now();
    let status = 0;
    let retryAfter: string | null = null;
    try {
      const res = await fetch(options.url, {
        method: "POST",
        headers: { "content-type": "application/json", "idempotency-key": key },
        body: JSON.stringify({ user_message: key, agent_response: `re ${key}` }),
        signal: AbortSignal.timeout(options.timeoutMs ?? 5000),
      });
      await res.arrayBuffer();
      status = res.status;
      retryAfter = res.headers.get("retry-after");
    } catch {
      status = 0;
    }
    const latencyMs = performance.now() - startedAt;
    results.push({ n: i, key, startedAt, latencyMs, status, retryAfter });
  };
  const loop = (async () => {
    while (!stopped) {
      const p = write(n++);
      inFlight.add(p);
      p.finally(() => inFlight.delete(p));
      await sleep(options.intervalMs);
    }
  })();
  return {
    results,
    async stop(): Promise<WriteResult[]> {
      stopped = true;
      await loop;
      await Promise.all(inFlight);
      return results.sort((a, b) => a.n - b.n);
    },
  };
}
