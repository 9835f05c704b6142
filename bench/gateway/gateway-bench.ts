import { randomBytes, randomUUID } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { createVault, decodeKey, keyId, sealCredential } from "@atrium/broker";
import { startGatewayService } from "@atrium/gateway";
import { createLogger } from "@atrium/kit";
import { createTestPostgres } from "@atrium/kit/testing";
import { autocannon, type CannonResult, round, sequential, wrk } from "../lib/load.js";
import { commandCpuMs, cpuSpentMs, processCpuMs } from "../lib/process-cpu.js";
import { startBrokerProcess } from "../lib/service-process.js";

const durationS = Number(process.env.BENCH_DURATION_S ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 20);
const tokenCount = 200;

async function main() {
  const pg = await createTestPostgres({ max: 20 });
  const logger = createLogger({ name: "bench", level: "warn" });
  const brokerKey = `bench-${randomBytes(8).toString("hex")}`;
  const env = {
    ENCRYPTION_KEY: randomBytes(32).toString("base64"),
    STATE_KEY: randomBytes(32).toString("hex"),
    API_KEYS: brokerKey,
    BROKER_HOST: "127.0.0.1",
    BROKER_REST_PORT: "0",
    BROKER_GRPC_PORT: "0",
    REFRESH_LOOP: "false",
  };
  // In a process of its own, so the gateway's figures do not include the broker's CPU.
  const broker = await startBrokerProcess({ ...env, DATABASE_URL: pg.url });
  const gatewayEnv = {
    GATEWAY_HOST: "127.0.0.1",
    GATEWAY_REST_PORT: "0",
    GATEWAY_GRPC_PORT: "0",
    BROKER_URL: broker.urls.rest,
    BROKER_API_KEY: brokerKey,
    CORS_ALLOWED_ORIGINS: "http://localhost",
  };
  const viaGrpc = await startGatewayService({
    logger,
    env: { ...gatewayEnv, BROKER_GRPC_URL: broker.urls.grpc ?? "" },
  });
  const viaRest = await startGatewayService({ logger, env: gatewayEnv });
  try {
    const created = await fetch(`${broker.urls.rest}/providers`, {
      method: "POST",
      headers: { "x-api-key": brokerKey, "content-type": "application/json" },
      body: JSON.stringify({
        name: "bench-idp",
        auth_type: "oauth2",
        client_id: "bench",
        client_secret: "bench-secret",
        auth_url: "http://127.0.0.1:9/authorize",
        token_url: "http://127.0.0.1:9/token",
      }),
    });
    const provider = (await created.json()) as { id: string };

    // Fresh OAuth connections sealed as the broker seals them: retrieval never refreshes.
    const key = decodeKey(env.ENCRYPTION_KEY) as Buffer;
    const vault = createVault({ keys: new Map([[keyId(key), key]]), currentKeyId: keyId(key) });
    const ids = Array.from({ length: tokenCount }, () => randomUUID());
    const params: unknown[] = [];
    const values = ids.map((id) => {
      params.push(
        id,
        sealCredential(vault, id, { access_token: `at-${id}`, token_type: "Bearer" }),
      );
      return `($${params.length - 1}, 'bench', '${provider.id}', 'oauth2', 'active', $${params.length}, now() + interval '1 hour', now() + interval '50 minutes')`;
    });
    await pg.sql.query(
      `INSERT INTO broker_connections (id, workspace_id, provider_id, auth_type, status, credential_enc, expires_at, refresh_due_at) VALUES ${values.join(",")}`,
      params,
    );

    const oneByOne = async (
      base: string,
      path: (id: string) => string,
      headers: Record<string, string> = {},
    ) => {
      const { p50, p99 } = await sequential(2 * ids.length, (i) =>
        fetch(`${base}${path(ids[i % ids.length])}`, { headers }).then((r) => r.arrayBuffer()),
      );
      return { p50_ms: round(p50), p99_ms: round(p99) };
    };
    const run = async (
      base: string,
      path: (id: string) => string,
      headers: Record<string, string> = {},
    ) => {
      // Warm-up: sessions, the gateway's per-connection strategy cache, JIT.
      for (const id of ids)
        await fetch(`${base}${path(id)}`, { headers }).then((r) => r.arrayBuffer());
      return autocannon({
        url: base,
        connections,
        // Load is generated off the services' event loop, so it does not slow down what it measures.
        workers: 1,
        duration: durationS,
        headers,
        requests: ids.map((id) => ({ method: "GET", path: path(id) })),
      });
    };
    // One at a time first: the latency a call adds, without queueing on a saturated machine.
    const oneAtATime = {
      "gateway /v1/token, gRPC to broker": await oneByOne(
        viaGrpc.urls.rest,
        (id) => `/v1/token/${id}`,
      ),
      "gateway /v1/token, REST to broker": await oneByOne(
        viaRest.urls.rest,
        (id) => `/v1/token/${id}`,
      ),
      "broker /connections/{id}/token (direct)": await oneByOne(
        broker.urls.rest,
        (id) => `/connections/${id}/token`,
        { "x-api-key": brokerKey },
      ),
      "no-op HTTP (gateway /health)": await oneByOne(viaGrpc.urls.rest, () => "/health"),
    };
    const noop = await run(viaGrpc.urls.rest, () => "/health");
    const direct = await run(broker.urls.rest, (id) => `/connections/${id}/token`, {
      "x-api-key": brokerKey,
    });
    const grpcPath = await run(viaGrpc.urls.rest, (id) => `/v1/token/${id}`);
    const grpcTransport = viaGrpc.brokerTransport();
    const restPath = await run(viaRest.urls.rest, (id) => `/v1/token/${id}`);
    // The same four with wrk (C, one thread): on two cores the Node generator's own CPU is taken
    // from the services, and more from the three-process gateway paths than from the direct one.
    // CPU per request of each process, from /proc: unlike throughput it hardly depends on what
    // else the machine is doing. The gateways run in this process and wrk outside it.
    const cpuNow = () => ({
      gateway: process.cpuUsage(),
      broker: processCpuMs(broker.pid) ?? 0,
      postgres: commandCpuMs("postgres"),
    });
    const byWrk = async (
      base: string,
      path: (id: string) => string,
      headers: Record<string, string> = {},
    ) => {
      const before = cpuNow();
      const result = await wrk({
        url: base,
        durationS,
        connections,
        headers,
        paths: ids.map(path),
      });
      const after = cpuNow();
      if (!result) return undefined;
      const perRequest = (ms: number) => Math.round((ms * 1000) / Math.max(1, result.requests));
      return {
        ...result,
        gateway_cpu_us: perRequest(
          (after.gateway.user +
            after.gateway.system -
            before.gateway.user -
            before.gateway.system) /
            1000,
        ),
        broker_cpu_us: perRequest(after.broker - before.broker),
        postgres_cpu_us: perRequest(cpuSpentMs(before.postgres, after.postgres)),
      };
    };
    const wrkRows = {
      "gateway /v1/token, gRPC to broker": await byWrk(
        viaGrpc.urls.rest,
        (id) => `/v1/token/${id}`,
      ),
      "gateway /v1/token, REST to broker": await byWrk(
        viaRest.urls.rest,
        (id) => `/v1/token/${id}`,
      ),
      "broker /connections/{id}/token (direct)": await byWrk(
        broker.urls.rest,
        (id) => `/connections/${id}/token`,
        { "x-api-key": brokerKey },
      ),
      "no-op HTTP (gateway /health)": await byWrk(viaGrpc.urls.rest, () => "/health"),
    };

    const row = (r: CannonResult) => ({
      requests_per_second: r.requests.average,
      p50_ms: r.latency.p50,
      p99_ms: r.latency.p99,
      non_2xx: r.non2xx,
      errors: r.errors,
    });
    const result = {
      duration_s: durationS,
      connections,
      gateway_token_grpc_to_broker: { ...row(grpcPath), broker_transport: grpcTransport },
      gateway_token_rest_to_broker: {
        ...row(restPath),
        broker_transport: viaRest.brokerTransport(),
      },
      direct_broker_token: row(direct),
      reference_noop_http: row(noop),
      one_at_a_time: oneAtATime,
      wrk: wrkRows,
    };
    console.table({
      "gateway /v1/token, gRPC to broker": row(grpcPath),
      "gateway /v1/token, REST to broker": row(restPath),
      "broker /connections/{id}/token (direct)": row(direct),
      "no-op HTTP (gateway /health)": row(noop),
    });
    console.table(wrkRows);
    console.table(oneAtATime);
    mkdirSync("bench/results", { recursive: true });
    writeFileSync("bench/results/gateway.json", `${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await viaGrpc.stop();
    await viaRest.stop();
    await broker.stop();
    await pg.drop();
  }
}

await main();
