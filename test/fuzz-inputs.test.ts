import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { brokerV1, gatewayV1, memoryV1 } from "@atrium/api";
import { type BrokerService, startBrokerService } from "@atrium/broker";
import { testBrokerEnv } from "@atrium/broker/testing";
import { startAgentService } from "@atrium/chat";
import { type GatewayService, startGatewayService } from "@atrium/gateway";
import { createLogger, type RunningService } from "@atrium/kit";
import { createTestPostgres, needsServer, type TestPostgres } from "@atrium/kit/testing";
import { keyDigest } from "@atrium/mcp";
import { startMemoryService } from "@atrium/memory";
import { connectJsonCalls, failed, type Probe } from "./fuzz/hostile-input.js";
import { probeMcp } from "./fuzz/mcp-calls.js";
import { operationsOf, probeRestOperation, type RestOperation } from "./fuzz/rest-routes.js";

/**
 * Every REST route and every RPC of the four services, on real PostgreSQL, gets malformed input:
 * NUL and lone surrogates in every field, wrong types, bad base64, huge and deeply nested bodies,
 * `%00` and `../` in ids and query values; the gateway's MCP endpoint gets the same in tool
 * arguments and broken JSON-RPC. Any 5xx other than 501 (a planned operation) fails.
 */
const logger = createLogger({ name: "fuzz", level: "silent" });
const brokerKey = `broker-${randomBytes(8).toString("hex")}`;
const gatewayKey = `gateway-${randomBytes(8).toString("hex")}`;
const dataDir = mkdtempSync(join(tmpdir(), "atrium-fuzz-"));
const openapi = (name: string) => new URL(`../openapi/${name}.v1.openapi.json`, import.meta.url);

/** The chat router is not transcoded, so it has no OpenAPI document. */
const chatOperations: RestOperation[] = [
  {
    method: "POST",
    path: "/api/v1/chat",
    hasBody: true,
    fields: [
      { name: "message", kind: "string" },
      { name: "workflow_id", kind: "string" },
      { name: "agent_id", kind: "string" },
      { name: "system_prompt", kind: "string" },
      { name: "context", kind: "object" },
    ],
  },
  { method: "GET", path: "/api/v1/chat/stream/{workflow_id}", hasBody: false, fields: [] },
  {
    method: "GET",
    path: "/api/v1/chat/history/{workflow_id}/{step_id}",
    hasBody: false,
    fields: [],
  },
];

let memoryPg: TestPostgres | undefined;
let brokerPg: TestPostgres | undefined;
let memory: RunningService;
let broker: BrokerService;
let gateway: GatewayService;
let agent: RunningService;

before(async () => {
  [memoryPg, brokerPg] = await Promise.all([createTestPostgres(), createTestPostgres()]).catch(
    () => [undefined, undefined],
  );
  if (!memoryPg || !brokerPg) return;
  memory = await startMemoryService({
    logger,
    env: {
      DATABASE_URL: memoryPg.url,
      ATRIUM_DATA_DIR: dataDir,
      MEMORY_HOST: "127.0.0.1",
      MEMORY_REST_PORT: "0",
      MEMORY_GRPC_PORT: "0",
      MEMORY_PROMOTER_INTERVAL: "1h",
    },
  });
  broker = await startBrokerService({
    sql: brokerPg.sql,
    logger,
    env: testBrokerEnv({ API_KEYS: brokerKey }),
  });
  agent = await startAgentService({
    logger,
    env: {
      AGENT_HOST: "127.0.0.1",
      AGENT_PORT: "0",
      ATRIUM_DATA_DIR: dataDir,
      CHAT_STREAM_TIMEOUT: "300ms",
    },
  });
  gateway = await startGatewayService({
    logger,
    env: {
      GATEWAY_HOST: "127.0.0.1",
      GATEWAY_REST_PORT: "0",
      GATEWAY_GRPC_PORT: "0",
      GATEWAY_PUBLIC_URL: "http://127.0.0.1:1",
      BROKER_URL: broker.urls.rest,
      BROKER_GRPC_URL: broker.urls.grpc ?? "",
      BROKER_API_KEY: brokerKey,
      GATEWAY_REQUIRE_API_KEY: "true",
      GATEWAY_API_KEYS: gatewayKey,
      GATEWAY_MCP_SCOPES: JSON.stringify([
        {
          key_sha256: keyDigest(gatewayKey),
          tenant_id: "fuzz",
          user_id: "u1",
          agent_id: "a1",
          workspace_id: "ws-fuzz",
        },
      ]),
      MEMORY_URL: memory.urls.rest,
      AGENT_CHAT_URL: agent.urls.rest,
    },
  });
});

after(async () => {
  await Promise.all([agent?.stop(), gateway?.stop(), memory?.stop()]);
  await broker?.stop();
  await Promise.all([memoryPg?.drop(), brokerPg?.drop()]);
  rmSync(dataDir, { recursive: true, force: true });
});

function collect() {
  const probes: Probe[] = [];
  return {
    add: (probe: Probe) => probes.push(probe),
    check(minimum: number) {
      assert.ok(probes.length >= minimum, `only ${probes.length} probes ran`);
      const failures = probes.filter(failed).map((p) => `${p.status} ${p.what}`);
      assert.deepEqual(failures, [], `${failures.length} of ${probes.length} probes got a 5xx`);
    },
  };
}

test("every REST route of every service answers hostile input without a 5xx", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const targets: [string, string, RestOperation[], Record<string, string>][] = [
    ["memory", memory.urls.rest, operationsOf(openapi("memory")), {}],
    ["broker", broker.urls.rest, operationsOf(openapi("broker")), { "x-api-key": brokerKey }],
    ["gateway", gateway.urls.rest, operationsOf(openapi("gateway")), { "x-api-key": gatewayKey }],
    ["agent", agent.urls.rest, chatOperations, {}],
  ];
  for (const [name, url, operations, headers] of targets) {
    await t.test(name, async () => {
      const probes = collect();
      for (const op of operations) await probeRestOperation(url, op, headers, probes.add);
      probes.check(operations.length * 10);
    });
  }
});

test("every RPC of every service answers hostile input without a server error", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const targets: [
    string,
    string,
    typeof memoryV1.MemoryService | typeof brokerV1.BrokerService | typeof gatewayV1.GatewayService,
    Record<string, string>,
  ][] = [
    ["memory", memory.urls.grpc ?? "", memoryV1.MemoryService, {}],
    ["broker", broker.urls.grpc ?? "", brokerV1.BrokerService, { "x-api-key": brokerKey }],
    ["gateway", gateway.urls.grpc ?? "", gatewayV1.GatewayService, { "x-api-key": gatewayKey }],
  ];
  for (const [name, url, service, headers] of targets) {
    await t.test(name, async () => {
      const probes = collect();
      await connectJsonCalls(url, service, headers, probes.add);
      probes.check(service.methods.length * 10);
    });
  }
});

test("the MCP endpoint answers hostile JSON-RPC without a server error", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const probes = collect();
  await probeMcp(`${gateway.urls.rest}/mcp`, gatewayKey, probes.add);
  probes.check(150);
});
