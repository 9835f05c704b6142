// What OpenTelemetry costs GetContext when on: two memory services over PostgreSQL and Redis in
// the same run, one with tracing off and one exporting every span (sampling 1.0) over
// OTLP/HTTP to a sink in this process that reads each export and discards it. They take the
// same load (autocannon, 32 connections, REST) in turns, off then on then on then off..., so
// that both see the same machine (this shared VM's CPU comes and goes); the ratio of their
// median throughputs is the cost. Throughput follows whatever else the shared machine runs, so
// each turn also reads the service's CPU time from /proc (utime + stime) and divides it by the
// requests it answered: CPU per request does not depend on the load beside it, and the ratio of
// the medians (on / off) is the figure to trust. Run by `BENCH_PART=otel` of memory-bench.ts;
// BENCH_OTEL_PROFILE=<dir> writes --cpu-prof profiles of both services to <dir>/off and <dir>/on.
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { autocannon, percentile, round } from "../lib/load.js";
import { processCpuMs } from "../lib/process-cpu.js";
import { startMemoryOnPostgres } from "../lib/service-process.js";
import { chainChecksDone } from "./chain-checks.js";

export interface OtelCostRow {
  tracing: "off" | "on";
  round: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  /** The service's CPU time (user + system) per request answered in this turn, µs. */
  cpuUsPerRequest: number;
}

export interface OtelCost {
  rows: OtelCostRow[];
  offRps: number;
  onRps: number;
  /** Median throughput on over off: 0.9 means tracing costs 10 %. */
  ratio: number;
  offCpuUs: number;
  onCpuUs: number;
  /** Median CPU per request on over off: 1.1 means tracing costs 10 % more CPU per request. */
  cpuRatio: number;
  /** OTLP requests the sink answered: proof the traced service exported at all. */
  exports: number;
}

/** An OTLP/HTTP receiver that answers every export and keeps nothing but their count. */
async function startDiscardingSink() {
  let exports = 0;
  const server = createServer((request, response) => {
    request.on("data", () => {});
    request.on("end", () => {
      exports++;
      response.writeHead(200, { "content-type": "application/x-protobuf" }).end();
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exports: () => exports,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A session with ten stored turns, checked into chains: its GetContext URL. */
async function seededContextUrl(service: Awaited<ReturnType<typeof startMemoryOnPostgres>>) {
  const rest = service.urls.rest;
  const created = await fetch(`${rest}/api/v1/sessions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      tenant_id: `bench-${randomUUID().slice(0, 8)}`,
      user_id: "u",
      agent_id: "a",
    }),
  });
  const { session_id } = (await created.json()) as { session_id: string };
  for (let i = 0; i < 10; i++) {
    await fetch(`${rest}/api/v1/sessions/${session_id}/interactions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        user_message: "What is a good espresso grinder for light roasts?",
        agent_response: "A flat burr grinder with fine steps suits light roasts.",
      }),
    });
  }
  await chainChecksDone(service.sql);
  return `${rest}/api/v1/sessions/${session_id}/context`;
}

export async function otelCostPart(options: { durationS: number; rounds: number }) {
  const sink = await startDiscardingSink();
  const profileDir = process.env.BENCH_OTEL_PROFILE;
  const profile = (tracing: string) =>
    profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}/${tracing}`] : [];
  const off = await startMemoryOnPostgres({}, profile("off"));
  const on = await startMemoryOnPostgres(
    {
      OTEL_EXPORTER_OTLP_ENDPOINT: sink.url,
      OTEL_TRACES_SAMPLER: "always_on",
      ...JSON.parse(process.env.BENCH_OTEL_ON_ENV ?? "{}"),
    },
    profile("on"),
  );
  const services = { off, on };
  try {
    const urls = { off: await seededContextUrl(off), on: await seededContextUrl(on) };
    for (const url of Object.values(urls)) await autocannon({ url, duration: 3 });
    const rows: OtelCostRow[] = [];
    for (let round = 0; round < options.rounds; round++) {
      const order = round % 2 === 0 ? (["off", "on"] as const) : (["on", "off"] as const);
      for (const tracing of order) {
        const cpuBefore = processCpuMs(services[tracing].pid) ?? 0;
        const r = await autocannon({
          url: urls[tracing],
          duration: options.durationS,
          connections: 32,
          pipelining: 1,
        });
        const cpuMs = (processCpuMs(services[tracing].pid) ?? 0) - cpuBefore;
        rows.push({
          tracing,
          round,
          rps: Math.round(r.requests.average),
          p50: r.latency.p50,
          p99: r.latency.p99,
          errors: r.errors + r.non2xx,
          cpuUsPerRequest: Math.round((1000 * cpuMs) / Math.max(r.requests.total, 1)),
        });
        console.log(rows.at(-1));
      }
    }
    const median = (tracing: "off" | "on", figure: "rps" | "cpuUsPerRequest") =>
      percentile(
        rows
          .filter((r) => r.tracing === tracing)
          .map((r) => r[figure])
          .sort((a, b) => a - b),
        50,
      );
    const offRps = median("off", "rps");
    const onRps = median("on", "rps");
    const offCpuUs = median("off", "cpuUsPerRequest");
    const onCpuUs = median("on", "cpuUsPerRequest");
    return {
      rows,
      offRps,
      onRps,
      ratio: round(onRps / offRps),
      offCpuUs,
      onCpuUs,
      cpuRatio: round(onCpuUs / offCpuUs),
      exports: sink.exports(),
    } satisfies OtelCost;
  } finally {
    await Promise.all([off.stop(), on.stop()]);
    await sink.close();
  }
}
