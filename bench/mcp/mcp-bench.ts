// MCP's cost: the `recall` tool called through the gateway's /mcp (Streamable HTTP, the
// official SDK's client, the key's scope) beside the same SearchMemory called straight on the
// memory service's REST API, in one run, alternating, on the same stored notes. Goal: MCP adds
// at most 2 ms at p50. Writes bench/results/mcp.json.
//
// The memory service and the measured gateway run in their own processes, as deployed: in this
// one the memory service's background work after each search (heat, its queries) would run
// inside whichever call came next, and the client and the gateway would take turns on one thread
// where in a deployment they run side by side. Memory runs on PostgreSQL and Redis, as deployed;
// on embedded PGlite its search keeps a whole core busy (WASM Postgres), which on two cores
// leaves the gateway and the client queueing for the other. Then each path runs again alone and
// the CPU each process spent per call is reported (/proc): steadier than latency on a shared VM.
//
//   node --conditions=atrium-source --import tsx bench/mcp/mcp-bench.ts   (needs PostgreSQL, Redis)
//   BENCH_CALLS=300, BENCH_WARMUP=3000 (defaults: rounds of all three paths before measuring)
//   BENCH_MEMORY_DB=embedded    memory on PGlite instead (the previous sessions' figures)
//   BENCH_GATEWAY_PROFILE=DIR   the gateway process writes a --cpu-prof profile into DIR
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { startMcpStack } from "../../test/mcp-e2e-harness.js";
import { percentile, round } from "../lib/load.js";
import { postJson } from "../lib/post-json.js";
import { machineTicks, processCpuMs, stealPercent } from "../lib/process-cpu.js";
import {
  startMemoryOnPostgres,
  startMemoryProcess,
  startServiceProcess,
} from "../lib/service-process.js";

const calls = Number(process.env.BENCH_CALLS ?? 300);
const warmup = Math.max(200, Number(process.env.BENCH_WARMUP ?? 3000));
const query = "Which hiking boots did I pick for the Alps?";

const memory =
  process.env.BENCH_MEMORY_DB === "embedded"
    ? await startMemoryProcess({
        MEMORY_HOST: "127.0.0.1",
        MEMORY_REST_PORT: "0",
        MEMORY_GRPC_PORT: "0",
        ATRIUM_DATA_DIR: mkdtempSync(join(tmpdir(), "mcp-bench-")),
        MEMORY_PROMOTER_INTERVAL: "1h",
      })
    : await startMemoryOnPostgres({ MEMORY_PROMOTER_INTERVAL: "1h" });
// A deployment's log level: the tests' debug lines would be cost the bench does not measure.
const stack = await startMcpStack({ logLevel: "info", memoryUrl: memory.urls.rest });
const gateway = await startServiceProcess<{ rest: string }>(
  new URL("serve-gateway.ts", import.meta.url),
  stack.gatewayEnv,
  process.env.BENCH_GATEWAY_PROFILE
    ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_GATEWAY_PROFILE}`]
    : [],
);
const client = new Client({ name: "mcp-bench", version: "1.0.0" });
try {
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${gateway.urls.rest}/mcp`), {
      requestInit: { headers: { "x-api-key": stack.keys.alice } },
      // With the SDK's one shared signal on every fetch, undici's abort listeners pile up on it
      // over the warm-up: a walk of the list per call and, past 1,500, a warning with a stack per
      // call, a cost of the bench client that the REST path's plain fetch does not pay. (`atrium
      // mcp` gives each request a signal of its own: transport/request-signal.ts.) No request is
      // in flight when this client closes, so none needs the signal.
      fetch: (url, init) => fetch(url, { ...init, signal: undefined }),
    }),
  );
  const notes = [
    "I picked the leather hiking boots with ankle support for the Alps trip.",
    "The Alps trip starts on the 12th of July from Geneva.",
    "My sister prefers trail runners over boots.",
  ];
  for (const note of notes) await client.callTool({ name: "remember", arguments: { note } });
  // The scope alice's key maps to (see the harness): the same memory the tool searches.
  const { session_id } = await postJson<{ session_id: string }>(
    `${stack.memoryUrl}/api/v1/sessions`,
    {
      tenant_id: "acme",
      user_id: "alice",
      agent_id: "desk",
    },
  );
  const viaMcp = async () => {
    const result = await client.callTool({ name: "recall", arguments: { query, limit: 5 } });
    if (result.isError) throw new Error(JSON.stringify(result.content));
  };
  const viaRest = async () => {
    await postJson(`${stack.memoryUrl}/api/v1/sessions/${session_id}/context/search`, {
      query,
      limit: 5,
    });
  };
  // The round trip MCP adds by design (agent → gateway → memory instead of agent → memory): a
  // no-op GET on the gateway, the floor of what the extra hop can cost on this machine.
  const hop = async () => {
    await (await fetch(`${gateway.urls.rest}/health`)).arrayBuffer();
  };
  // A gateway in service has run these paths thousands of times; one just started runs them in
  // V8's baseline tier, at up to twice the CPU (measured: 3.9 ms per recall over its first 300
  // calls, 1.8 ms after 3,000). The first and last 100 warm-up recalls show that cost apart.
  const warmupCpu = { first: 0, last: 0 };
  for (let i = 0; i < warmup; i++) {
    const edge = i < 100 ? "first" : i >= warmup - 100 ? "last" : undefined;
    const before = processCpuMs(gateway.pid) ?? 0;
    await viaMcp();
    if (edge) warmupCpu[edge] += ((processCpuMs(gateway.pid) ?? 0) - before) / 100;
    await viaRest();
    await hop();
    if ((i + 1) % 500 === 0) console.error(`warm-up: ${i + 1} of ${warmup} rounds`);
  }
  const samples = { mcp: [] as number[], rest: [] as number[], hop: [] as number[] };
  const ticksBefore = machineTicks();
  for (let i = 0; i < calls; i++) {
    for (const [name, call] of [
      ["mcp", viaMcp],
      ["rest", viaRest],
      ["hop", hop],
    ] as const) {
      const start = performance.now();
      await call();
      samples[name].push(performance.now() - start);
    }
  }
  // Each MCP call against the REST call right after it: the machine's drift cancels out.
  const paired = samples.mcp.map((x, i) => x - samples.rest[i]).sort((a, b) => a - b);
  const rows = Object.entries(samples).map(([path, xs]) => {
    xs.sort((a, b) => a - b);
    return {
      path: {
        mcp: "recall via /mcp (gateway)",
        rest: "SearchMemory REST (memory service)",
        hop: "one HTTP round trip (gateway /health)",
      }[path],
      calls: xs.length,
      p50: round(percentile(xs, 50)),
      p95: round(percentile(xs, 95)),
      p99: round(percentile(xs, 99)),
    };
  });
  const steal = stealPercent(ticksBefore, machineTicks());
  // Each path alone, for the CPU every process spends on one call of it.
  const cpuCalls = Math.min(calls, 200);
  const cpu = [];
  for (const [path, call] of [
    ["mcp", viaMcp],
    ["rest", viaRest],
    ["hop", hop],
  ] as const) {
    const before = {
      gateway: processCpuMs(gateway.pid) ?? 0,
      memory: processCpuMs(memory.pid) ?? 0,
      client: process.cpuUsage(),
    };
    for (let i = 0; i < cpuCalls; i++) await call();
    const client = process.cpuUsage(before.client);
    cpu.push({
      path,
      "gateway CPU ms/call": round(((processCpuMs(gateway.pid) ?? 0) - before.gateway) / cpuCalls),
      "memory CPU ms/call": round(((processCpuMs(memory.pid) ?? 0) - before.memory) / cpuCalls),
      "client CPU ms/call": round((client.user + client.system) / 1000 / cpuCalls),
    });
  }
  console.table(rows);
  console.table(cpu);
  console.log(
    `gateway CPU per recall while warming up: ${round(warmupCpu.first)} ms over the first 100 calls, ${round(warmupCpu.last)} ms over the last 100`,
  );
  const added = round(rows[0].p50 - rows[1].p50);
  const addedPaired = round(percentile(paired, 50));
  console.log(
    `MCP adds ${added} ms at p50 (goal: at most 2 ms); median of paired differences ${addedPaired} ms; ` +
      `the extra hop alone (a no-op round trip) costs ${rows[2].p50} ms at p50 here; ` +
      `the hypervisor took ${steal}% of the machine's CPU time while the figures were measured`,
  );
  mkdirSync(new URL("../results/", import.meta.url), { recursive: true });
  writeFileSync(
    new URL("../results/mcp.json", import.meta.url),
    `${JSON.stringify({ at: new Date().toISOString(), memoryDb: process.env.BENCH_MEMORY_DB ?? "postgres", warmup, calls, rows, cpu, gatewayCpuPerRecallWarmingUpMs: { first100: round(warmupCpu.first), last100: round(warmupCpu.last) }, addedP50Ms: added, addedPairedMedianMs: addedPaired, hopP50Ms: rows[2].p50, stealPercent: steal }, null, 2)}\n`,
  );
} finally {
  await client.close().catch(() => undefined);
  await gateway.stop();
  await stack.stop();
  await memory.stop();
}
