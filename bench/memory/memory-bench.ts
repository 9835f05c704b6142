// Memory benchmark (retrieval quality: bench/memory/recall). Part 1: StoreInteraction and GetContext over REST (autocannon; the 1,000
// req/s rows at a constant rate, open loop) and gRPC (a load loop on one HTTP/2 connection)
// against PostgreSQL + Redis, beside a no-op Fastify route and a no-op connect-node gRPC method
// measured in the same run. Part 2: SearchMemory's retrieval for one user with 1k / 10k / 100k
// chains of ten turns each (10k / 100k / 1M indexed turns), hybrid and the first release's vector
// search on the same data, on both vector paths (pgvector HNSW on PGlite, exact cosine scan on
// PostgreSQL without pgvector).
// Prints tables and writes bench/results/memory.json.
//
//   npx tsc -b && node --conditions=atrium-source --import tsx bench/memory/memory-bench.ts
//   (the service under test runs from the compiled packages; `make bench` builds first)
//   BENCH_DURATION_S=5 BENCH_RATE=1000 BENCH_TIERS=1000,10000,100000 BENCH_SEARCHES=30 (defaults)
//   BENCH_PART=throughput|search and BENCH_PATHS=exact|hnsw run a part; other figures are kept
//   BENCH_PART=otel: GetContext with OpenTelemetry off and on (sampling 1.0) in turns, and the
//   ratio of throughputs and of CPU per request (otel-cost.ts); BENCH_ROUNDS=5 turns each;
//   BENCH_OTEL_ON_ENV='{"OTEL_TRACES_SAMPLER":"always_off"}' adds variables to the traced
//   service, BENCH_OTEL_PROFILE=<dir> writes --cpu-prof profiles of both
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { memoryV1 } from "@atrium/api";
import { createPgliteSql, type Sql } from "@atrium/kit";
import { createTestPostgres } from "@atrium/kit/testing";
import { createGloveEmbedder } from "@atrium/memory";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { autocannon, openLoop, percentile, round, wrk, wrkPaced } from "../lib/load.js";
import { startMemoryOnPostgres } from "../lib/service-process.js";
import { createBenchSearch, TURNS_PER_CHAIN } from "./bench-search.js";
import { chainChecksDone } from "./chain-checks.js";
import { type OtelCost, otelCostPart } from "./otel-cost.js";

const durationS = Number(process.env.BENCH_DURATION_S ?? 5);
const rate = Number(process.env.BENCH_RATE ?? 1000);
const tiers = (process.env.BENCH_TIERS ?? "1000,10000,100000").split(",").map(Number);
const searches = Number(process.env.BENCH_SEARCHES ?? 30);

interface Row {
  name: string;
  transport: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

async function cannon(name: string, options: Record<string, unknown>): Promise<Row> {
  const r = await autocannon({ duration: durationS, connections: 32, pipelining: 1, ...options });
  return {
    name,
    transport: "rest",
    rps: round(r.requests.average),
    p50: r.latency.p50,
    p99: r.latency.p99,
    errors: r.errors + r.non2xx,
  };
}

/** Constant-rate (open-loop) REST load at BENCH_RATE; latency counted from each request's due time. */
async function steady(name: string, url: string): Promise<Row> {
  const r = await openLoop({ url, rate, durationS });
  return { name, transport: "rest", ...r };
}

/** Closed-loop gRPC load: `concurrency` callers in a loop for the duration, on one connection. */
async function grpcLoad(
  name: string,
  concurrency: number,
  call: () => Promise<unknown>,
): Promise<Row> {
  const samples: number[] = [];
  let errors = 0;
  const end = Date.now() + durationS * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < end) {
        const start = process.hrtime.bigint();
        try {
          await call();
          samples.push(Number(process.hrtime.bigint() - start) / 1e6);
        } catch {
          errors++;
        }
      }
    }),
  );
  samples.sort((a, b) => a - b);
  return {
    name,
    transport: "grpc",
    rps: round(samples.length / durationS),
    p50: round(percentile(samples, 50)),
    p99: round(percentile(samples, 99)),
    errors,
  };
}

async function throughputPart() {
  const server = await startMemoryOnPostgres();
  const service = { urls: server.urls };
  const noopUrl = server.urls.noop;
  const rows: Row[] = [];
  try {
    const rest = service.urls.rest;
    const tenant = `bench-${randomUUID().slice(0, 8)}`;
    const create = await fetch(`${rest}/api/v1/sessions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ tenant_id: tenant, user_id: "u", agent_id: "a" }),
    });
    const { session_id } = (await create.json()) as { session_id: string };
    const interaction = JSON.stringify({
      user_message: "What is a good espresso grinder for light roasts?",
      agent_response: "A flat burr grinder with fine steps suits light roasts.",
    });
    const client = createClient(
      memoryV1.MemoryService,
      createGrpcTransport({ baseUrl: service.urls.grpc as string }),
    );
    const headers = { "content-type": "application/json" };
    for (let i = 0; i < 10; i++) {
      await fetch(`${rest}/api/v1/sessions/${session_id}/interactions`, {
        method: "POST",
        headers,
        body: interaction,
      });
    }
    await chainChecksDone(server.sql);
    const contextUrl = `${rest}/api/v1/sessions/${session_id}/context`;
    // Warm-up, not reported: the first seconds of a fresh process run cold code (JIT, lazy
    // module loading) and would otherwise land in the percentiles of the first measured row.
    await autocannon({ url: contextUrl, duration: 3 });
    await autocannon({ url: `${noopUrl}/noop`, duration: 1 });
    rows.push(await cannon("no-op Fastify route (reference)", { url: `${noopUrl}/noop` }));
    rows.push(await steady(`no-op Fastify route at ${rate} req/s (reference)`, `${noopUrl}/noop`));
    rows.push(await steady(`GetContext at ${rate} req/s`, contextUrl));
    // The same two at the same rate from wrk, when installed: a floor free of Node's pauses.
    // After a warm-up at that rate (V8 settles its tiering and allocation sites after a few
    // seconds of steady load; until then scavenges run several times longer), the two
    // alternate five times so that both see the same machine (this VM's CPU steal comes and
    // goes), and each row reports the run with the median p99.
    if (await wrkPaced({ url: contextUrl, rate, durationS: 10 })) {
      const paced: Record<"noop" | "context", Row[]> = { noop: [], context: [] };
      for (let round = 0; round < 5; round++) {
        for (const [kind, url] of [
          ["noop", `${noopUrl}/noop`],
          ["context", contextUrl],
        ] as const) {
          const r = (await wrkPaced({ url, rate, durationS })) as NonNullable<
            Awaited<ReturnType<typeof wrkPaced>>
          >;
          paced[kind].push({ name: kind, transport: "rest", ...r });
        }
      }
      const median = (runs: Row[]) => [...runs].sort((a, b) => a.p99 - b.p99)[2] as Row;
      const p99s = (runs: Row[]) => runs.map((r) => r.p99).join(" / ");
      rows.push({
        ...median(paced.noop),
        name: `no-op Fastify route, wrk-paced ${rate} req/s (reference; p99 of 5 runs: ${p99s(paced.noop)})`,
      });
      rows.push({
        ...median(paced.context),
        name: `GetContext, wrk-paced ${rate} req/s (p99 of 5 runs: ${p99s(paced.context)})`,
      });
    }
    rows.push(await cannon("GetContext (max rate)", { url: contextUrl }));
    const contextMax = await wrk({ url: contextUrl, durationS, connections: 32 });
    if (contextMax)
      rows.push({ name: "GetContext (max rate, wrk)", transport: "rest", ...contextMax });
    const noopGrpc = createClient(
      memoryV1.MemoryService,
      createGrpcTransport({ baseUrl: server.urls.noopGrpc }),
    );
    rows.push(await grpcLoad("no-op gRPC method (reference)", 32, () => noopGrpc.healthCheck({})));
    rows.push(await grpcLoad("GetContext", 32, () => client.getContext({ sessionId: session_id })));
    rows.push(
      await cannon("StoreInteraction", {
        url: `${rest}/api/v1/sessions/${session_id}/interactions`,
        method: "POST",
        headers,
        body: interaction,
      }),
    );
    await chainChecksDone(server.sql);
    // The same from wrk, which leaves the service the CPU that autocannon's Node process takes.
    const storeMax = await wrk({
      url: `${rest}/api/v1/sessions/${session_id}/interactions`,
      durationS,
      connections: 32,
      body: interaction,
    });
    if (storeMax) rows.push({ name: "StoreInteraction (wrk)", transport: "rest", ...storeMax });
    // The chain checks of the REST runs would otherwise share the CPU with the gRPC run.
    await chainChecksDone(server.sql);
    rows.push(
      await grpcLoad("StoreInteraction", 32, () =>
        client.storeInteraction({
          sessionId: session_id,
          userMessage: "What is a good espresso grinder for light roasts?",
          agentResponse: "A flat burr grinder with fine steps suits light roasts.",
        }),
      ),
    );
    await chainChecksDone(server.sql);
  } finally {
    await server.stop();
  }
  return rows;
}

interface SearchRow {
  path: string;
  chains: number;
  turns: number;
  /** `hybrid` (the default) or `vector` (the first release's chain search), same data. */
  mode: "hybrid" | "vector";
  p50: number;
  p95: number;
  /** The first search after seeding, not in p50/p95. */
  warmUpMs: number;
  seedSeconds: number;
}

async function searchPart(): Promise<SearchRow[]> {
  const rows: SearchRow[] = [];
  // The service's default embedder, whose vectors (100 dimensions) the vector paths scan.
  const embedder = createGloveEmbedder();
  // The service's pool size (pg's default): the hybrid search runs its lists in parallel.
  const pg = await createTestPostgres({ max: 10 });
  const lite = await createPgliteSql();
  const paths = (process.env.BENCH_PATHS ?? "exact,hnsw").split(",");
  const targets: { path: string; sql: Sql; key: string }[] = [
    { path: "exact (PostgreSQL, no pgvector)", sql: pg.sql, key: "exact" },
    { path: "HNSW (PGlite + pgvector)", sql: lite, key: "hnsw" },
  ].filter((t) => paths.includes(t.key));
  try {
    for (const target of targets) {
      const bench = await createBenchSearch(target.sql, embedder);
      for (const tier of tiers) {
        const seedStart = Date.now();
        await bench.seedUpTo(tier);
        const seedSeconds = round((Date.now() - seedStart) / 1000);
        const warmUpMs = await bench.warmUp();
        for (const mode of ["vector", "hybrid"] as const) {
          const samples = await bench.measure(mode, searches);
          rows.push({
            path: `${target.path} [${bench.kind}]`,
            chains: tier,
            turns: tier * TURNS_PER_CHAIN,
            mode,
            p50: samples.p50,
            p95: samples.p95,
            warmUpMs,
            seedSeconds,
          });
          console.log(rows.at(-1));
        }
      }
    }
  } finally {
    await lite.close();
    await pg.drop();
  }
  return rows;
}

async function main() {
  const only = process.env.BENCH_PART;
  let otel: OtelCost | undefined;
  if (only === "otel") {
    otel = await otelCostPart({ durationS, rounds: Number(process.env.BENCH_ROUNDS ?? 5) });
    console.table(otel.rows);
    console.log(
      `GetContext with tracing on (sampling 1.0) / off: ${otel.onRps} / ${otel.offRps} req/s (medians) = ${otel.ratio}; CPU per request ${otel.onCpuUs} / ${otel.offCpuUs} µs = ${otel.cpuRatio}`,
    );
  }
  const throughput = only === undefined || only === "throughput" ? await throughputPart() : [];
  if (throughput.length) console.table(throughput);
  const search = only === undefined || only === "search" ? await searchPart() : [];
  if (search.length) console.table(search);
  mkdirSync(new URL("../results/", import.meta.url), { recursive: true });
  const file = new URL("../results/memory.json", import.meta.url);
  // BENCH_PART runs one half; the other half's figures from an earlier run are kept.
  const previous = existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : {};
  const at = new Date().toISOString();
  writeFileSync(
    file,
    `${JSON.stringify(
      {
        ...previous,
        ...(throughput.length ? { throughput: { at, durationS, rate, rows: throughput } } : {}),
        ...(otel ? { otel: { at, durationS, ...otel } } : {}),
        ...(search.length
          ? {
              search: {
                at,
                searches,
                // A run of one path keeps the other path's rows from an earlier run.
                rows: [
                  ...((previous.search?.rows ?? []) as SearchRow[]).filter(
                    (old) =>
                      old.turns !== undefined && !search.some((row) => row.path === old.path),
                  ),
                  ...search,
                ],
              },
            }
          : {}),
      },
      null,
      2,
    )}\n`,
  );
}

await main();
