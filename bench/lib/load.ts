// Load generation and latency statistics shared by the benchmarks, so every bench reports
// percentiles the same way.
import { createRequire } from "node:module";

/** The part of autocannon's result the benches report. */
export interface CannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number; average: number };
  non2xx: number;
  errors: number;
}

// autocannon is CommonJS without type declarations.
export const autocannon = createRequire(import.meta.url)("autocannon") as (
  options: Record<string, unknown>,
) => Promise<CannonResult>;

/** Nearest-rank percentile of samples sorted ascending; NaN when there are none. */
export const percentile = (sorted: number[], p: number) =>
  sorted.length === 0
    ? Number.NaN
    : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

/** Two decimals, for milliseconds in tables and result files. */
export const round = (x: number) => Math.round(x * 100) / 100;

/** One at a time: the cost of a single operation without queueing behind others (ms). */
export async function sequential(count: number, run: (i: number) => Promise<unknown>) {
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    const start = process.hrtime.bigint();
    await run(i);
    samples.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  samples.sort((a, b) => a - b);
  return { p50: percentile(samples, 50), p99: percentile(samples, 99) };
}
