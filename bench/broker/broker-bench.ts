// Broker benchmark: token retrieval latency beside a plain `pg` round trip and a no-op HTTP route
// (same run, same machine), then the refresh loop over 10,000 due connections with two broker
// instances on one database. Prints a table and writes bench/results/broker.json.
//
//   node --conditions=atrium-source --import tsx bench/broker/broker-bench.ts
//   BENCH_CONNECTIONS=10000 BENCH_DURATION_S=10 BENCH_RATE=1000 (defaults)
import { randomBytes, randomUUID } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createVault, decodeKey, keyId, sealCredential, startBrokerService } from "@atrium/broker";
import { createLogger } from "@atrium/kit";
import { createTestPostgres } from "@atrium/kit/testing";
import { autocannon, sequential, wrkPaced } from "../lib/load.js";
import { startBrokerProcess } from "../lib/service-process.js";

type WrkRow = NonNullable<Awaited<ReturnType<typeof wrkPaced>>>;

const dueConnections = Number(process.env.BENCH_CONNECTIONS ?? 10_000);
const durationS = Number(process.env.BENCH_DURATION_S ?? 10);
const rate = Number(process.env.BENCH_RATE ?? 1_000);

/** A token endpoint that rotates refresh tokens and counts refreshes per refresh token. */
async function startTokenEndpoint() {
  const refreshesPerToken = new Map<string, number>();
  let refreshes = 0;
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => {
      body += c;
    });
    req.on("end", () => {
      const form = new URLSearchParams(body);
      const token = form.get("refresh_token") ?? "";
      refreshes++;
      refreshesPerToken.set(token, (refreshesPerToken.get(token) ?? 0) + 1);
      res.setHeader("content-type", "application/json");
      res.end(
        JSON.stringify({
          access_token: `at-${randomUUID()}`,
          token_type: "Bearer",
          expires_in: 3600,
          refresh_token: `rt-${randomUUID()}`,
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    refreshes: () => refreshes,
    doubleRefreshed: () => [...refreshesPerToken.values()].filter((n) => n > 1).length,
    close: () => new Promise((r) => server.close(r)),
  };
}

async function main() {
  const pg = await createTestPostgres({ max: 20 });
  const tokenEndpoint = await startTokenEndpoint();
  const apiKey = `bench-${randomBytes(8).toString("hex")}`;
  const env = {
    ENCRYPTION_KEY: randomBytes(32).toString("base64"),
    STATE_KEY: randomBytes(32).toString("hex"),
    API_KEYS: apiKey,
    BROKER_HOST: "127.0.0.1",
    BROKER_REST_PORT: "0",
    BROKER_GRPC_ENABLED: "false",
    REFRESH_LOOP: "false",
    REFRESH_BATCH_SIZE: "200",
    REFRESH_CONCURRENCY: "32",
  };
  const logger = createLogger({ name: "broker", level: "warn" });
  const a = await startBrokerService({ env, logger, sql: pg.sql });
  const b = await startBrokerService({ env, logger, sql: pg.sql });
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${a.urls.rest}${path}`, {
      method,
      headers: { "x-api-key": apiKey, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return (await response.json()) as Record<string, string>;
  };
  try {
    const provider = await call("POST", "/providers", {
      name: "bench-idp",
      auth_type: "oauth2",
      client_id: "bench",
      client_secret: "bench-secret",
      auth_url: `${tokenEndpoint.url}/authorize`,
      token_url: `${tokenEndpoint.url}/token`,
    });

    // Connections sealed exactly as the broker seals them, inserted in bulk.
    const key = decodeKey(env.ENCRYPTION_KEY) as Buffer;
    const vault = createVault({ keys: new Map([[keyId(key), key]]), currentKeyId: keyId(key) });
    const ids: string[] = [];
    for (let offset = 0; offset < dueConnections; offset += 1000) {
      const values: string[] = [];
      const params: unknown[] = [];
      for (let i = offset; i < Math.min(dueConnections, offset + 1000); i++) {
        const id = randomUUID();
        ids.push(id);
        const sealed = sealCredential(vault, id, {
          access_token: `at-${id}`,
          token_type: "Bearer",
          refresh_token: `rt-initial-${id}`,
        });
        params.push(id, sealed);
        values.push(
          `($${params.length - 1}, 'bench', '${provider.id}', 'oauth2', 'active', $${params.length}, now() + interval '1 hour', now() - interval '1 second')`,
        );
      }
      await pg.sql.query(
        `INSERT INTO broker_connections (id, workspace_id, provider_id, auth_type, status, credential_enc, expires_at, refresh_due_at) VALUES ${values.join(",")}`,
        params,
      );
    }

    // 1. Token retrieval (decrypt + read + audit insert) at a fixed rate, beside references, on a
    // broker in a process of its own, as deployed: in this one the bench's own work (seeding,
    // the load generators' results, their garbage) would land in the broker's latency.
    const brokerProcess = await startBrokerProcess({ ...env, DATABASE_URL: pg.url });
    const headers = { "x-api-key": apiKey };

    // The rate the goal is stated at (p99 at most 5 ms at 1,000 req/s), paced by wrk (a C
    // generator, off Node's event loops), first: later runs leave PostgreSQL busy vacuuming and
    // checkpointing their audit rows. Five runs each, no-op and token reads alternating, so a
    // passing stall of this shared VM lands in one run; the median run is reported.
    const paths = ids.slice(0, 500).map((id) => `/connections/${id}/token`);
    await pg.sql.query("VACUUM ANALYZE broker_connections");
    await pg.sql.query("CHECKPOINT");
    const pacedRuns = { noop: [] as WrkRow[], token: [] as WrkRow[] };
    const runS = Math.max(3, Math.floor(durationS / 2));
    for (let run = 0; run < 5; run++) {
      const noopRun = await wrkPaced({
        url: `${brokerProcess.urls.rest}/health`,
        rate,
        durationS: runS,
      });
      const tokenRun = await wrkPaced({
        url: brokerProcess.urls.rest,
        rate,
        durationS: runS,
        headers,
        paths,
      });
      if (noopRun && tokenRun) {
        pacedRuns.noop.push(noopRun);
        pacedRuns.token.push(tokenRun);
      }
    }
    const medianRun = (runs: WrkRow[]) => [...runs].sort((x, y) => x.p99 - y.p99)[2];
    const paced = medianRun(pacedRuns.token);
    const pacedNoop = medianRun(pacedRuns.noop);
    const pacedServed = pacedRuns.token.reduce((n, r) => n + r.requests - r.errors, 0);

    const pgReference = await sequential(3_000, () => pg.sql.query("SELECT 1"));
    const get = (path: string) =>
      fetch(`${brokerProcess.urls.rest}${path}`, { headers }).then((r) => r.arrayBuffer());
    const noopSequential = await sequential(2_000, () => get("/health"));
    const retrievalSequential = await sequential(2_000, (i) =>
      get(`/connections/${ids[i % 500]}/token`),
    );
    const noop = await autocannon({
      url: `${brokerProcess.urls.rest}/health`,
      connections: 20,
      // Load is generated off the brokers' event loop, so it does not slow down what it measures.
      workers: 1,
      duration: Math.max(3, Math.floor(durationS / 2)),
      overallRate: rate,
    });
    const retrieval = await autocannon({
      url: brokerProcess.urls.rest,
      connections: 20,
      workers: 1,
      duration: durationS,
      overallRate: rate,
      headers,
      requests: ids
        .slice(0, 500)
        .map((id) => ({ method: "GET", path: `/connections/${id}/token` })),
    });

    await brokerProcess.stop();

    // Every served retrieval has its committed audit row (group commit must not drop any).
    const audited = await pg.sql.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM audit_events WHERE event_type = 'token.retrieved'",
    );
    const served =
      2_000 + retrieval.requests.total - retrieval.non2xx - retrieval.errors + pacedServed;

    // 2. Refresh loop: every connection is due; two instances race for them.
    const started = process.hrtime.bigint();
    const [passA, passB] = await Promise.all([a.refreshLoop.runOnce(), b.refreshLoop.runOnce()]);
    const refreshSeconds = Number(process.hrtime.bigint() - started) / 1e9;
    const counts = await pg.sql.query<{ refresh_count: number; n: number }>(
      "SELECT refresh_count, count(*)::int AS n FROM broker_connections GROUP BY refresh_count",
    );

    const result = {
      token_retrieval: {
        rate_target: rate,
        requests_per_second: retrieval.requests.average,
        p50_ms: retrieval.latency.p50,
        p99_ms: retrieval.latency.p99,
        non_2xx: retrieval.non2xx,
        errors: retrieval.errors,
        retrievals_served: served,
        retrievals_audited: audited.rows[0]?.n ?? 0,
      },
      token_retrieval_wrk_paced: paced
        ? {
            requests_per_second: paced.rps,
            p50_ms: paced.p50,
            p99_ms: paced.p99,
            non_2xx: paced.errors,
            p99_ms_of_each_run: pacedRuns.token.map((r) => r.p99),
          }
        : "wrk not installed",
      reference_noop_http_wrk_paced: pacedNoop
        ? {
            requests_per_second: pacedNoop.rps,
            p50_ms: pacedNoop.p50,
            p99_ms: pacedNoop.p99,
            p99_ms_of_each_run: pacedRuns.noop.map((r) => r.p99),
          }
        : "wrk not installed",
      sequential_token_retrieval: {
        p50_ms: retrievalSequential.p50,
        p99_ms: retrievalSequential.p99,
      },
      sequential_noop_http: { p50_ms: noopSequential.p50, p99_ms: noopSequential.p99 },
      reference_noop_http: { p50_ms: noop.latency.p50, p99_ms: noop.latency.p99 },
      reference_pg_select_1: { p50_ms: pgReference.p50, p99_ms: pgReference.p99 },
      refresh_loop: {
        connections_due: dueConnections,
        refreshes_performed: tokenEndpoint.refreshes(),
        double_refreshed: tokenEndpoint.doubleRefreshed(),
        instance_a_refreshed: passA.refreshed,
        instance_b_refreshed: passB.refreshed,
        failed: passA.failed + passB.failed,
        seconds: refreshSeconds,
        refreshes_per_second: tokenEndpoint.refreshes() / refreshSeconds,
        rows_by_refresh_count: Object.fromEntries(counts.rows.map((r) => [r.refresh_count, r.n])),
      },
    };
    console.table({
      "token retrieval, one at a time": {
        p50_ms: retrievalSequential.p50,
        p99_ms: retrievalSequential.p99,
        rps: Number.NaN,
      },
      "no-op HTTP, one at a time": {
        p50_ms: noopSequential.p50,
        p99_ms: noopSequential.p99,
        rps: Number.NaN,
      },
      [`token retrieval at ${rate}/s target`]: {
        p50_ms: result.token_retrieval.p50_ms,
        p99_ms: result.token_retrieval.p99_ms,
        rps: result.token_retrieval.requests_per_second,
      },
      [`no-op HTTP at ${rate}/s target`]: {
        p50_ms: noop.latency.p50,
        p99_ms: noop.latency.p99,
        rps: noop.requests.average,
      },
      "pg SELECT 1": { p50_ms: pgReference.p50, p99_ms: pgReference.p99, rps: Number.NaN },
      [`token retrieval, wrk-paced ${rate}/s (median of 5 runs)`]: {
        p50_ms: paced?.p50 ?? Number.NaN,
        p99_ms: paced?.p99 ?? Number.NaN,
        rps: paced?.rps ?? Number.NaN,
      },
      [`no-op HTTP, wrk-paced ${rate}/s (median of 5 runs)`]: {
        p50_ms: pacedNoop?.p50 ?? Number.NaN,
        p99_ms: pacedNoop?.p99 ?? Number.NaN,
        rps: pacedNoop?.rps ?? Number.NaN,
      },
    });
    console.log(
      // Audited can exceed served by the calls still in flight when the load generator stopped.
      `token retrievals served ${served}, audited ${result.token_retrieval.retrievals_audited} (must not be fewer)`,
    );
    console.log(JSON.stringify(result.refresh_loop, null, 2));
    mkdirSync("bench/results", { recursive: true });
    writeFileSync("bench/results/broker.json", `${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await a.stop();
    await b.stop();
    await tokenEndpoint.close();
    await pg.drop();
  }
}

await main();
