// gRPC transport benchmark, all load from h2load (a C generator; both transports measured by the
// same client). Part 1: a no-op method on Atrium's service host beside a bare `@grpc/grpc-js`
// server (the reference) and Connect's Node handler alone, 10 connections × 10 streams, in
// rounds that alternate so that all three see the same machine. Part 2: memory GetContext over
// gRPC and over REST from the same memory process (PostgreSQL + Redis), 20 concurrent callers
// each. Prints tables and writes bench/results/grpc.json.
//
//   npx tsc -b && node --conditions=atrium-source --import tsx bench/grpc/grpc-bench.ts
//   (the servers under test run from the compiled packages; `make bench` builds first)
//   BENCH_DURATION_S=5 BENCH_ROUNDS=3 (defaults)
import { mkdirSync, writeFileSync } from "node:fs";
import { memoryV1 } from "@atrium/api";
import { create, toBinary } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import {
  grpcEnvelope,
  grpcHeaders,
  type H2loadOptions,
  type H2loadResult,
  h2load,
} from "../lib/h2load.js";
import { round } from "../lib/load.js";
import { processCpuMs } from "../lib/process-cpu.js";
import { startMemoryOnPostgres, startServiceProcess } from "../lib/service-process.js";
import { chainChecksDone } from "../memory/chain-checks.js";

const durationS = Number(process.env.BENCH_DURATION_S ?? 5);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const cpuRequests = Number(process.env.BENCH_CPU_REQUESTS ?? 30_000);

interface Row extends H2loadResult {
  name: string;
  /** Every round's figure, in order; `rps` is their median. */
  rounds: number[];
  /** Server CPU (user + system) per call over `cpuRequests` calls, µs. */
  cpuUsPerCall?: number;
}

type Load = (
  mode: Pick<H2loadOptions, "durationS" | "requests">,
) => Promise<H2loadResult | undefined>;

async function measured(name: string, load: Load, mode: Parameters<Load>[0]) {
  const result = await load(mode);
  if (!result) throw new Error("h2load is not installed (Debian: nghttp2-client)");
  if (result.errors > 0) throw new Error(`${name}: ${result.errors} failed requests`);
  return result;
}

/**
 * Runs every load for BENCH_DURATION_S once per round, in turn, and keeps each one's median
 * round; then counts the CPU the server process spends on `cpuRequests` calls of each.
 */
async function alternate(pid: number, loads: Record<string, Load>): Promise<Row[]> {
  const runs: Record<string, H2loadResult[]> = {};
  for (let i = 0; i < rounds; i++) {
    for (const [name, load] of Object.entries(loads)) {
      runs[name] = [...(runs[name] ?? []), await measured(name, load, { durationS })];
    }
  }
  const rows: Row[] = [];
  for (const [name, load] of Object.entries(loads)) {
    const results = runs[name] as H2loadResult[];
    const median = [...results].sort((a, b) => a.rps - b.rps)[Math.floor(results.length / 2)];
    const before = processCpuMs(pid);
    const counted = await measured(name, load, { requests: cpuRequests });
    const after = processCpuMs(pid);
    rows.push({
      name,
      ...(median as H2loadResult),
      rounds: results.map((r) => r.rps),
      cpuUsPerCall:
        before === undefined || after === undefined
          ? undefined
          : round(((after - before) * 1000) / counted.done),
    });
  }
  return rows;
}

async function noopPart(): Promise<Row[]> {
  const server = await startServiceProcess<{ atrium: string; grpcJs: string; connect: string }>(
    new URL("./serve-noop.ts", import.meta.url),
    {},
  );
  try {
    const path = "/memory.v1.MemoryService/HealthCheck";
    const body = grpcEnvelope(
      toBinary(memoryV1.HealthCheckRequestSchema, create(memoryV1.HealthCheckRequestSchema)),
    );
    const load =
      (baseUrl: string): Load =>
      (mode) =>
        h2load({
          url: `${baseUrl}${path}`,
          ...mode,
          clients: 10,
          streams: 10,
          body,
          headers: grpcHeaders,
        });
    for (const baseUrl of Object.values(server.urls)) {
      const client = createClient(memoryV1.MemoryService, createGrpcTransport({ baseUrl }));
      const answer = await client.healthCheck({});
      if (answer.status !== "healthy") throw new Error(`${baseUrl} answered ${answer.status}`);
    }
    return await alternate(server.pid, {
      "no-op, Atrium service host (kit gRPC server, interceptors)": load(server.urls.atrium),
      "no-op, @grpc/grpc-js server (reference)": load(server.urls.grpcJs),
      "no-op, Connect's Node handler alone (the previous transport)": load(server.urls.connect),
    });
  } finally {
    await server.stop();
  }
}

async function getContextPart(): Promise<Row[]> {
  const server = await startMemoryOnPostgres();
  try {
    const client = createClient(
      memoryV1.MemoryService,
      createGrpcTransport({ baseUrl: server.urls.grpc }),
    );
    const { sessionId } = await client.createSession({
      tenantId: "bench",
      userId: "u",
      agentId: "a",
    });
    for (let i = 0; i < 10; i++) {
      await client.storeInteraction({
        sessionId,
        userMessage: "What is a good espresso grinder for light roasts?",
        agentResponse: "A flat burr grinder with fine steps suits light roasts.",
      });
    }
    await chainChecksDone(server.sql);
    const grpcAnswer = await client.getContext({ sessionId });
    const restAnswer = await fetch(`${server.urls.rest}/api/v1/sessions/${sessionId}/context`);
    if (!restAnswer.ok || grpcAnswer.stmEvents.length === 0) {
      throw new Error(
        `GetContext answered REST ${restAnswer.status}, gRPC ${grpcAnswer.stmEvents.length} messages`,
      );
    }
    const body = grpcEnvelope(
      toBinary(
        memoryV1.GetContextRequestSchema,
        create(memoryV1.GetContextRequestSchema, { sessionId }),
      ),
    );
    return await alternate(server.pid, {
      "GetContext over gRPC (2 connections × 10 streams)": (mode) =>
        h2load({
          url: `${server.urls.grpc}/memory.v1.MemoryService/GetContext`,
          ...mode,
          clients: 2,
          streams: 10,
          body,
          headers: grpcHeaders,
        }),
      "GetContext over REST (20 HTTP/1.1 connections)": (mode) =>
        h2load({
          url: `${server.urls.rest}/api/v1/sessions/${sessionId}/context`,
          ...mode,
          clients: 20,
          h1: true,
        }),
    });
  } finally {
    await server.stop();
  }
}

const noop = await noopPart();
const context = await getContextPart();
const ratio = (a: number | undefined, b: number | undefined) => round((a ?? 0) / (b ?? 1));
const summary = {
  "no-op throughput, Atrium / grpc-js (goal ≥ 0.67)": ratio(noop[0]?.rps, noop[1]?.rps),
  "no-op CPU per call, Atrium / grpc-js (goal ≤ 1.5)": ratio(
    noop[0]?.cpuUsPerCall,
    noop[1]?.cpuUsPerCall,
  ),
  "GetContext throughput, gRPC / REST (goal ≥ 0.6)": ratio(context[0]?.rps, context[1]?.rps),
};
console.table(
  [...noop, ...context].map(({ name, rps, meanMs, rounds, cpuUsPerCall }) => ({
    name,
    rps,
    meanMs,
    rounds: rounds.join(" / "),
    cpuUsPerCall,
  })),
);
console.table(summary);
mkdirSync(new URL("../results/", import.meta.url), { recursive: true });
writeFileSync(
  new URL("../results/grpc.json", import.meta.url),
  `${JSON.stringify({ date: new Date().toISOString(), durationS, rows: [...noop, ...context], summary }, null, 2)}\n`,
);
