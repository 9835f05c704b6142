// Load generation and latency statistics shared by the benchmarks, so every bench reports
// percentiles the same way.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";

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

export interface OpenLoopOptions {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** Requests per second, sent at even intervals whatever the answers' pace. */
  rate: number;
  durationS: number;
  /** Keep-alive connections the requests may use; default 64. */
  connections?: number;
}

export interface OpenLoopResult {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

/**
 * Open-loop load at a constant rate, the way wrk2 measures: request i is due at start + i/rate
 * and its latency counts from when it was due, so a stall shows in the percentiles instead of
 * silently slowing the sender (coordinated omission). autocannon's `overallRate` instead fires
 * each second's quota back to back and then waits, which measures bursts, not a steady rate.
 */
export async function openLoop(options: OpenLoopOptions): Promise<OpenLoopResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.connections ?? 64 });
  const url = new URL(options.url);
  const total = Math.round(options.rate * options.durationS);
  const intervalMs = 1000 / options.rate;
  const samples: number[] = [];
  let errors = 0;
  let sent = 0;
  const inFlight = new Set<Promise<void>>();
  const send = (dueAt: number) => {
    const done = new Promise<void>((resolve) => {
      const request = http.request(
        url,
        { method: options.method ?? "GET", headers: options.headers, agent },
        (response) => {
          response.resume();
          response.on("end", () => {
            if (response.statusCode && response.statusCode < 300)
              samples.push(performance.now() - dueAt);
            else errors++;
            resolve();
          });
        },
      );
      request.on("error", () => {
        errors++;
        resolve();
      });
      request.end(options.body);
    });
    inFlight.add(done);
    void done.then(() => inFlight.delete(done));
  };
  const start = performance.now();
  while (sent < total) {
    const now = performance.now();
    while (sent < total && start + sent * intervalMs <= now) send(start + sent++ * intervalMs);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  await Promise.all(inFlight);
  const elapsedS = (performance.now() - start) / 1000;
  agent.destroy();
  samples.sort((a, b) => a - b);
  return {
    rps: round(samples.length / elapsedS),
    p50: round(percentile(samples, 50)),
    p99: round(percentile(samples, 99)),
    errors,
  };
}

/** Milliseconds from one of wrk's latency figures ("850.00us", "1.31ms", "1.02s"). */
function wrkMs(figure: string): number {
  const match = /^([\d.]+)(us|ms|s|m)$/.exec(figure);
  if (!match) return Number.NaN;
  const scale = { us: 0.001, ms: 1, s: 1000, m: 60_000 }[match[2] as "us" | "ms" | "s" | "m"];
  return round(Number(match[1]) * scale);
}

export interface WrkOptions {
  url: string;
  durationS: number;
  connections: number;
  /**
   * Requests per second for all connections together, each sent at its slot of a fixed schedule
   * (start + i/rate) or at once when its connection frees up late; unpaced by default.
   */
  rate?: number;
  /** A JSON body sent with POST. */
  body?: string;
  /** Request headers. */
  headers?: Record<string, string>;
  /** GET these paths in turn instead of the URL's own. */
  paths?: string[];
}

/**
 * Load from wrk (Debian's `wrk`, a C load generator much lighter than any Node one, so that on a
 * small machine it leaves more of the CPU to the service under test). One thread, `connections`
 * keep-alive connections. Undefined when wrk is not installed. Asynchronous, so a service in this
 * process keeps answering while wrk runs.
 */
export async function wrk(options: WrkOptions) {
  const script = join(mkdtempSync(join(tmpdir(), "wrk-")), "load.lua");
  const lines: string[] = [];
  if (options.body !== undefined) {
    lines.push(
      'wrk.method = "POST"',
      'wrk.headers["content-type"] = "application/json"',
      `wrk.body = [==[${options.body}]==]`,
    );
  }
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    lines.push(`wrk.headers[${JSON.stringify(name)}] = ${JSON.stringify(value)}`);
  }
  if (options.paths !== undefined) {
    lines.push(
      `local paths = {${options.paths.map((path) => JSON.stringify(path)).join(",")}}`,
      "local next_path = 0",
      "function request()",
      "  next_path = next_path % #paths + 1",
      "  return wrk.format(nil, paths[next_path])",
      "end",
    );
  }
  if (options.rate !== undefined) {
    // wrk's Lua has no sub-second clock of its own; LuaJIT's FFI reads CLOCK_MONOTONIC (1).
    lines.push(
      'local ffi = require("ffi")',
      "ffi.cdef[[",
      "typedef struct { long tv_sec; long tv_nsec; } atrium_timespec;",
      "int clock_gettime(int clk_id, atrium_timespec *tp);",
      "]]",
      'local ts = ffi.new("atrium_timespec")',
      "local function now_ms()",
      "  ffi.C.clock_gettime(1, ts)",
      "  return tonumber(ts.tv_sec) * 1000 + tonumber(ts.tv_nsec) / 1e6",
      "end",
      `local interval = ${1000 / options.rate}`,
      "local slot = nil",
      "function delay()",
      "  local now = now_ms()",
      "  slot = (slot or now) + interval",
      "  if slot <= now then return 0 end",
      "  return math.floor(slot - now)",
      "end",
    );
  }
  writeFileSync(script, `${lines.join("\n")}\n`);
  let out: string;
  try {
    ({ stdout: out } = await promisify(execFile)(
      "wrk",
      [
        "-t1",
        `-c${options.connections}`,
        `-d${options.durationS}s`,
        "--latency",
        "-s",
        script,
        options.url,
      ],
      { encoding: "utf8" },
    ));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  } finally {
    rmSync(dirname(script), { recursive: true, force: true });
  }
  const percentileOf = (p: number) =>
    wrkMs(new RegExp(`^\\s+${p}%\\s+(\\S+)`, "m").exec(out)?.[1] ?? "");
  return {
    requests: Number(/(\d+) requests in/.exec(out)?.[1] ?? 0),
    rps: round(Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? Number.NaN)),
    p50: percentileOf(50),
    p99: percentileOf(99),
    errors: Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0),
  };
}

/**
 * Paced load from wrk: one request every `1/rate` seconds on a fixed schedule, spread over
 * `rate / 50` keep-alive connections (rounded up) so that each has 50 ms between its requests.
 * A request whose connection is still busy at its slot goes when the connection frees up, so
 * a stall longer than that shows in fewer requests rather than in the percentiles; the achieved
 * rate is printed beside them for that reason.
 */
export function wrkPaced(
  options: { url: string; rate: number; durationS: number } & Pick<WrkOptions, "headers" | "paths">,
) {
  return wrk({
    url: options.url,
    durationS: options.durationS,
    connections: Math.max(1, Math.ceil(options.rate / 50)),
    rate: options.rate,
    headers: options.headers,
    paths: options.paths,
  });
}
