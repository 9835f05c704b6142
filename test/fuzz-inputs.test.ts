import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { brokerV1, gatewayV1, memoryV1 } from "@atrium/api";
import { type BrokerService, startBrokerService } from "@atrium/broker";
import { testBrokerEnv } from "@atrium/broker/testing";
import { startAgentService } from "@atrium/chat";
import { type GatewayService, startGatewayService } from "@atrium/gateway";
import { apiKeyDigestHex, createLogger, type RunningService } from "@atrium/kit";
import { createTestPostgres, needsServer, type TestPostgres } from "@atrium/kit/testing";
import { startMemoryService } from "@atrium/memory";
import { create, toBinary } from "@bufbuild/protobuf";
import {
  connectJsonCall,
  connectJsonCalls,
  deepObject,
  failed,
  grpcBinaryCall,
  malformedProtobuf,
  type Probe,
} from "./fuzz/hostile-input.js";
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
          key_sha256: apiKeyDigestHex(gatewayKey),
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

/** Issue 28's findings, each a caller's 4xx on the real services (they were 5xx, 200 or stored). */
describe("inputs that were our failure or someone else's are the caller's error", () => {
  const { StoreInteractionRequestSchema } = memoryV1;
  const storeInteraction = "/memory.v1.MemoryService/StoreInteraction";
  const interaction = (init: Parameters<typeof create<typeof StoreInteractionRequestSchema>>[1]) =>
    toBinary(StoreInteractionRequestSchema, create(StoreInteractionRequestSchema, init));
  const messageOf = async (response: Response) =>
    ((await response.json()) as { message: string }).message;
  const connectJson = (path: string, body: string) =>
    connectJsonCall(memory.urls.grpc ?? "", path, body);

  test("malformed protobuf over gRPC is INVALID_ARGUMENT, not INTERNAL", async (t) => {
    if (!(await needsServer(t, "postgres"))) return;
    for (const [what, bytes] of Object.entries(malformedProtobuf)) {
      const answer = await grpcBinaryCall(
        memory.urls.grpc ?? "",
        storeInteraction,
        Uint8Array.from(bytes),
      );
      assert.equal(answer.code, 3, `${what}: ${answer.message}`);
      assert.match(answer.message, /memory\.v1\.StoreInteractionRequest/, what);
    }
  });

  test("a Timestamp out of range or with bad nanos never reaches PostgreSQL", async (t) => {
    if (!(await needsServer(t, "postgres"))) return;
    for (const timestamp of [
      { seconds: 2n ** 62n },
      { seconds: -(2n ** 62n) },
      { seconds: 1n, nanos: -1 },
      { seconds: 1n, nanos: 1_000_000_000 },
    ]) {
      const answer = await grpcBinaryCall(
        memory.urls.grpc ?? "",
        storeInteraction,
        interaction({ sessionId: "s-ts", userMessage: "hi", timestamp }),
      );
      assert.equal(answer.code, 3, answer.message);
      assert.match(answer.message, /^timestamp /);
    }
    const impossible = await fetch(`${memory.urls.rest}/api/v1/sessions/s-ts/interactions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ user_message: "hi", timestamp: "2026-02-30T00:00:00Z" }),
    });
    assert.equal(impossible.status, 400);
    assert.match(await messageOf(impossible), /"timestamp": .* is not a real date/);
    const hex = await fetch(`${memory.urls.rest}/api/v1/sessions/s-ts/context?limit=0x10`);
    assert.equal(hex.status, 400);
    assert.match(await messageOf(hex), /"limit": "0x10" is not a decimal integer/);
  });

  test("a message over 1 MiB is refused on gRPC and Connect as on REST, and not stored", async (t) => {
    if (!(await needsServer(t, "postgres"))) return;
    const huge = "x".repeat(2 * 1024 * 1024);
    const grpc = await grpcBinaryCall(
      memory.urls.grpc ?? "",
      storeInteraction,
      interaction({ sessionId: "s-big", userMessage: huge }),
    );
    assert.equal(grpc.code, 8, grpc.message);
    const connect = await connectJson(
      storeInteraction,
      JSON.stringify({ sessionId: "s-big", userMessage: huge }),
    );
    assert.equal(connect.code, "resource_exhausted");
    const rest = await fetch(`${memory.urls.rest}/api/v1/sessions/s-big/interactions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ user_message: huge }),
    });
    assert.equal(rest.status, 413);
    const context = await fetch(`${memory.urls.rest}/api/v1/sessions/s-big/context`);
    const stored = context.ok
      ? (((await context.json()) as { stm_events?: unknown[] }).stm_events ?? [])
      : [];
    assert.deepEqual(stored, []);
  });

  test("Connect JSON applies the depth rule to unknown fields as REST does", async (t) => {
    if (!(await needsServer(t, "postgres"))) return;
    const deep = `{"sessionId":"s-deep","x":${deepObject(10_000)}}`;
    const connect = await connectJson(storeInteraction, deep);
    assert.equal(connect.code, "invalid_argument");
    assert.match(connect.message, /nested more than 64 levels/);
    const rest = await fetch(`${memory.urls.rest}/api/v1/sessions/s-deep/interactions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: `{"x":${deepObject(10_000)}}`,
    });
    assert.equal(rest.status, 400);
  });

  test("a __proto__ key is a 400 naming the key, not 'not valid JSON'", async (t) => {
    if (!(await needsServer(t, "postgres"))) return;
    const rest = await fetch(`${memory.urls.rest}/api/v1/sessions/s-proto/interactions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"user_message":"hi","metadata":{"__proto__":{"x":"1"}}}',
    });
    assert.equal(rest.status, 400);
    assert.equal(
      await messageOf(rest),
      'a key of metadata is "__proto__", which is not accepted as a key',
    );
  });

  test("the broker: 10,000 levels of params and a __proto__ param are 400s naming params", async (t) => {
    if (!(await needsServer(t, "postgres"))) return;
    const post = (params: string) =>
      fetch(`${broker.urls.rest}/providers`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": brokerKey },
        body: `{"name":"fuzz-deep","auth_type":"api_key","params":${params}}`,
      });
    const deep = await post(deepObject(10_000));
    assert.equal(deep.status, 400);
    assert.match(await messageOf(deep), /^params\.a\.a.* is nested more than 64 levels$/);
    const proto = await post('{"__proto__":"x"}');
    assert.equal(proto.status, 400);
    assert.match(await messageOf(proto), /a key of params is "__proto__"/);
  });

  test("the gateway: a 100 KB api_key is the caller's 400, not the provider's outage", async (t) => {
    if (!(await needsServer(t, "postgres"))) return;
    const provider = await fetch(`${broker.urls.rest}/providers`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": brokerKey },
      body: JSON.stringify({
        name: "fuzz-keyed",
        auth_type: "api_key",
        api_base_url: `${broker.urls.rest}/health`,
      }),
    });
    assert.equal(provider.status, 200);
    const { id } = (await provider.json()) as { id: string };
    const capture = await fetch(`${gateway.urls.rest}/v1/capture-credential`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        provider_id: id,
        workspace_id: "ws-fuzz",
        api_key: "k".repeat(100_000),
      }),
    });
    assert.equal(capture.status, 400);
    assert.equal(await messageOf(capture), "api_key is longer than 4096 bytes");
  });
});
