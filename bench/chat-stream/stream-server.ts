// The server side of the chat-stream benchmark, in its own process so client work does not
// share its event loop: the chat router with a trace bus on the in-process cache or Redis (with
// history in trace files, or in PostgreSQL as several agent hosts keep it), or (reference) a bare
// node:http SSE fan-out with no bus, no log and no pub/sub.
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay, PerformanceObserver } from "node:perf_hooks";
import {
  createChatRouter,
  createSqlTraceStore,
  createTraceBus,
  migrateChat,
  type TraceBus,
} from "@atrium/chat";
import { type Cache, createMemoryCache, createRedisCache } from "@atrium/kit";
import { createTestPostgres, type TestPostgres } from "@atrium/kit/testing";
import Fastify from "fastify";

export type Mode = "memory" | "redis" | "redis-postgres" | "reference";

export type Command =
  | { cmd: "start"; mode: Mode; redisUrl?: string }
  | { cmd: "subscribers" }
  | {
      cmd: "publish";
      workflows: string[];
      ratePerWorkflow: number;
      durationS: number;
      warmupS: number;
      settleMs: number;
    }
  | { cmd: "stop" };

const send = (message: unknown) => process.send?.(message);
const now = () => performance.timeOrigin + performance.now();

let cache: Cache | undefined;
let bus: TraceBus | undefined;
let tracesDir: string | undefined;
let database: TestPostgres | undefined;
let close: (() => Promise<void>) | undefined;
const referenceStreams = new Map<string, Set<ServerResponse>>();
const referenceSeq = new Map<string, number>();
const published = new Set<string>();

async function start(mode: Mode, redisUrl?: string): Promise<number> {
  if (mode === "reference") {
    const server = createServer((req, res) => {
      const workflowId = req.url?.split("/").pop() ?? "";
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      res.flushHeaders();
      let set = referenceStreams.get(workflowId);
      if (!set) {
        set = new Set();
        referenceStreams.set(workflowId, set);
      }
      set.add(res);
      res.on("close", () => set.delete(res));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    close = () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      });
    return (server.address() as AddressInfo).port;
  }
  cache = mode === "memory" ? createMemoryCache() : createRedisCache({ url: redisUrl! });
  tracesDir = mkdtempSync(join(tmpdir(), "bench-traces-"));
  if (mode === "redis-postgres") {
    // A schema of its own on the test server, dropped at stop; pool size as the agent host's.
    database = await createTestPostgres({ max: 10 });
    await migrateChat(database.sql);
  }
  const store = database
    ? createSqlTraceStore({
        sql: database.sql,
        retentionSeconds: 7 * 86_400,
        writeIntervalMs: writeIntervalMs(),
      })
    : undefined;
  bus = createTraceBus({ cache, tracesDir, store });
  const kernel = {
    traceBus: bus,
    execute: async () => ({ status: "success" as const, metadata: {} }),
  };
  const app = Fastify();
  await app.register(createChatRouter(kernel), { prefix: "/api/v1" });
  await app.listen({ port: 0, host: "127.0.0.1" });
  close = async () => {
    await app.close();
    // The benchmark's workflows would otherwise sit in Redis for the 7-day retention.
    const keys = [...published].flatMap((w) => [`trace_log:${w}`, `trace_seq:${w}`]);
    if (keys.length > 0) await cache?.del(...keys);
    await bus?.close();
    await cache?.close();
    await database?.drop();
  };
  return (app.server.address() as AddressInfo).port;
}

/** BENCH_TRACE_WRITE_INTERVAL_MS: the store's spacing of batches (0: a batch as soon as the last ended). */
function writeIntervalMs(): number | undefined {
  const value = process.env.BENCH_TRACE_WRITE_INTERVAL_MS;
  return value === undefined ? undefined : Number(value);
}

function subscribers(): number {
  if (cache) return cache.subscriberCount();
  let n = 0;
  for (const set of referenceStreams.values()) n += set.size;
  return n;
}

/**
 * `measured` is false for the warm-up's events and the closing `step_complete`: the client checks
 * them for loss and order but leaves them out of the steady-state latency.
 */
function publishOne(workflowId: string, last: boolean, measured: boolean): Promise<unknown> {
  const data = { sent_at: now(), measured, summary: last ? "done" : undefined };
  const type = last ? "step_complete" : "thinking";
  if (bus) return bus.publish({ workflow_id: workflowId, step_id: "step_bench", type, data });
  const seq = (referenceSeq.get(workflowId) ?? 0) + 1;
  referenceSeq.set(workflowId, seq);
  const event = {
    workflow_id: workflowId,
    step_id: "step_bench",
    type,
    timestamp: new Date().toISOString(),
    data,
    seq,
  };
  const chunk = `id: ${seq}\ndata: ${JSON.stringify(event)}\n\n`;
  for (const res of referenceStreams.get(workflowId) ?? []) {
    res.write(chunk);
    if (last) res.end();
  }
  return Promise.resolve();
}

/**
 * Each workflow publishes at a steady rate, workflows staggered evenly across the interval: first
 * `warmupS` of unmeasured events, then `durationS` of measured ones. Once those are all out, and
 * `settleMs` later, each workflow's `step_complete` closes its streams, so that 1,000 streams
 * closing within one interval are not inside the measured window.
 */
async function publish(
  workflows: string[],
  ratePerWorkflow: number,
  durationS: number,
  warmupS: number,
  settleMs: number,
) {
  for (const workflowId of workflows) published.add(workflowId);
  const warmup = Math.round(ratePerWorkflow * warmupS);
  const perWorkflow = warmup + Math.round(ratePerWorkflow * durationS);
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const gcPauses: number[] = [];
  const gcObserver = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) gcPauses.push(entry.duration);
  });
  gcObserver.observe({ entryTypes: ["gc"] });
  const intervalMs = 1000 / ratePerWorkflow;
  const started = performance.now();
  const sent = new Map(workflows.map((w) => [w, 0]));
  const pending = new Set<Promise<unknown>>();
  let maxLagMs = 0;
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      const elapsed = performance.now() - started;
      let done = true;
      for (const [i, workflowId] of workflows.entries()) {
        const offset = (i / workflows.length) * intervalMs;
        const due = Math.min(perWorkflow, Math.floor((elapsed - offset) / intervalMs) + 1);
        let count = sent.get(workflowId)!;
        if (due - count > 1) maxLagMs = Math.max(maxLagMs, (due - count - 1) * intervalMs);
        while (count < due) {
          count++;
          const p = publishOne(workflowId, false, count > warmup);
          pending.add(p);
          void p.finally(() => pending.delete(p));
        }
        sent.set(workflowId, count);
        if (count < perWorkflow) done = false;
      }
      if (done) {
        clearInterval(timer);
        resolve();
      }
    }, 2);
  });
  await Promise.all(pending);
  await new Promise((r) => setTimeout(r, settleMs));
  // Staggered across one interval as the events were: workflows end at different moments.
  await Promise.all(
    workflows.map(
      (workflowId, i) =>
        new Promise((resolve, reject) => {
          const offset = (i / workflows.length) * intervalMs;
          setTimeout(() => publishOne(workflowId, true, false).then(resolve, reject), offset);
        }),
    ),
  );
  loop.disable();
  gcObserver.disconnect();
  return {
    perWorkflow: perWorkflow + 1,
    maxTimerLagMs: Math.round(maxLagMs),
    loopDelayP99Ms: loop.percentile(99) / 1e6,
    loopDelayMaxMs: loop.max / 1e6,
    gcTotalMs: gcPauses.reduce((a, b) => a + b, 0),
    gcMaxMs: Math.max(0, ...gcPauses),
  };
}

process.on("message", async (message: Command) => {
  try {
    if (message.cmd === "start") send({ port: await start(message.mode, message.redisUrl) });
    else if (message.cmd === "subscribers") send({ subscribers: subscribers() });
    else if (message.cmd === "publish") {
      const { workflows, ratePerWorkflow, durationS, warmupS, settleMs } = message;
      send(await publish(workflows, ratePerWorkflow, durationS, warmupS, settleMs));
    } else if (message.cmd === "stop") {
      await close?.();
      if (tracesDir) rmSync(tracesDir, { recursive: true, force: true });
      send({ stopped: true });
      process.exit(0);
    }
  } catch (error) {
    send({ error: String((error as Error).stack ?? error) });
  }
});
