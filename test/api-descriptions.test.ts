// The committed descriptions as third-party tools use them, against running services: a client
// generated from each OpenAPI document (openapi-typescript types, make gen; openapi-fetch) calls
// with auth and gets the documented, typed errors; buf curl lists every gRPC port's methods by
// server reflection and calls grpc.health.v1.Health/Check there.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { startBrokerService } from "@atrium/broker";
import { testBrokerEnv } from "@atrium/broker/testing";
import { startAgentService } from "@atrium/chat";
import { startGatewayService } from "@atrium/gateway";
import { createLogger, createPgliteSql, type RunningService } from "@atrium/kit";
import { startMemoryService } from "@atrium/memory";
import createClient from "openapi-fetch";
import type { paths as BrokerPaths } from "../packages/api/src/gen/openapi/broker.v1.js";
import type { paths as ChatPaths } from "../packages/api/src/gen/openapi/chat.js";
import type { paths as GatewayPaths } from "../packages/api/src/gen/openapi/gateway.v1.js";
import type { paths as MemoryPaths } from "../packages/api/src/gen/openapi/memory.v1.js";

const root = new URL("..", import.meta.url).pathname;
const run = promisify(execFile);
const logger = createLogger({ name: "api-descriptions", level: "silent" });
const key = (name: string) => `${name}-${randomBytes(8).toString("hex")}`;

/** `buf curl` over plain-text HTTP/2, with no schema but what the server reflects. */
const bufCurl = (...args: string[]) =>
  run(join(root, "node_modules/.bin/buf"), [
    "curl",
    "--protocol",
    "grpc",
    "--http2-prior-knowledge",
    ...args,
  ]);

describe("the API descriptions, used by third-party tools against running services", () => {
  const memoryKey = key("memory");
  const brokerKey = key("broker");
  const gatewayKey = key("gateway");
  const agentKey = key("agent");
  let dataDir: string;
  const services: RunningService[] = [];
  let memory: RunningService;
  let broker: RunningService;
  let gateway: RunningService;
  let agent: RunningService;

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "api-descriptions-"));
    memory = await startMemoryService({
      env: {
        MEMORY_HOST: "127.0.0.1",
        MEMORY_REST_PORT: "0",
        MEMORY_GRPC_PORT: "0",
        ATRIUM_DATA_DIR: join(dataDir, "memory"),
        MEMORY_PROMOTER_INTERVAL: "0s",
        ATRIUM_MEMORY_API_KEY: memoryKey,
      },
      logger,
    });
    services.push(memory);
    const sql = await createPgliteSql({ dataDir: join(dataDir, "broker") });
    broker = await startBrokerService({ sql, logger, env: testBrokerEnv({ API_KEYS: brokerKey }) });
    services.push(broker, { name: "broker-sql", urls: { rest: "" }, stop: () => sql.close() });
    gateway = await startGatewayService({
      logger,
      env: {
        GATEWAY_HOST: "127.0.0.1",
        GATEWAY_REST_PORT: "0",
        GATEWAY_GRPC_PORT: "0",
        BROKER_URL: broker.urls.rest,
        BROKER_GRPC_URL: broker.urls.grpc ?? "",
        BROKER_API_KEY: brokerKey,
        GATEWAY_REQUIRE_API_KEY: "true",
        GATEWAY_API_KEYS: gatewayKey,
      },
    });
    services.push(gateway);
    agent = await startAgentService({
      env: {
        AGENT_HOST: "127.0.0.1",
        AGENT_PORT: "0",
        TRACES_DIR: join(dataDir, "traces"),
        ATRIUM_AGENT_API_KEY: agentKey,
      },
      logger,
    });
    services.push(agent);
  });
  after(async () => {
    for (const service of services.reverse()) await service.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("memory: a generated client creates a session with the key and reads typed 401 and 404", async () => {
    const client = createClient<MemoryPaths>({ baseUrl: memory.urls.rest });
    const refused = await client.POST("/api/v1/sessions", {
      body: { tenant_id: "t", user_id: "u" },
    });
    assert.equal(refused.response.status, 401);
    assert.equal(refused.error?.code, "Unauthenticated");

    const headers = { "X-API-Key": memoryKey };
    const created = await client.POST("/api/v1/sessions", {
      headers,
      body: { tenant_id: "t", user_id: "u" },
    });
    assert.equal(created.response.status, 200);
    assert.match(created.data?.session_id ?? "", /\S/);

    const missing = await client.GET("/api/v1/sessions/{session_id}/context", {
      headers,
      params: { path: { session_id: "no-such-session" } },
    });
    assert.equal(missing.response.status, 404);
    assert.equal(missing.error?.code, "NotFound");
    assert.match(missing.error?.message ?? "", /session/);
  });

  it("broker: a generated client reads providers with the key and gets typed 401 and 404", async () => {
    const client = createClient<BrokerPaths>({ baseUrl: broker.urls.rest });
    const refused = await client.GET("/providers");
    assert.equal(refused.response.status, 401);
    assert.equal(refused.error?.code, "Unauthenticated");

    const headers = { "X-API-Key": brokerKey };
    const listed = await client.GET("/providers", { headers });
    assert.equal(listed.response.status, 200);
    assert.deepEqual(listed.data?.providers ?? [], []);

    const missing = await client.GET("/connections/{id}/token", {
      headers,
      params: { path: { id: "00000000-0000-0000-0000-000000000000" } },
    });
    assert.equal(missing.response.status, 404);
    assert.equal(missing.error && "code" in missing.error ? missing.error.code : "", "NotFound");
  });

  it("gateway: a generated client gets 401 without a key, 403 with a wrong one, 200 with its own", async () => {
    const client = createClient<GatewayPaths>({ baseUrl: gateway.urls.rest });
    const missing = await client.GET("/v1/connections", { params: { query: {} } });
    assert.equal(missing.response.status, 401);
    assert.equal(missing.error?.code, "Unauthenticated");
    const wrong = await client.GET("/v1/connections", { headers: { "X-API-Key": "wrong" } });
    assert.equal(wrong.response.status, 403);
    assert.equal(wrong.error?.code, "PermissionDenied");
    const listed = await client.GET("/v1/connections", { headers: { "X-API-Key": gatewayKey } });
    assert.equal(listed.response.status, 200, JSON.stringify(listed.error));
    assert.ok(Array.isArray(listed.data?.connections));
  });

  it("chat: a generated client gets the chat API's typed {error} bodies", async () => {
    const client = createClient<ChatPaths>({ baseUrl: agent.urls.rest });
    const refused = await client.GET("/api/v1/chat/workflows");
    assert.equal(refused.response.status, 401);
    // The host's refusal passes through the router's error handler: `{error}` like the rest.
    assert.match(refused.error?.error ?? "", /API key/);

    const headers = { "X-API-Key": agentKey };
    const listed = await client.GET("/api/v1/chat/workflows", { headers });
    assert.equal(listed.response.status, 200);
    assert.deepEqual(listed.data?.workflows, []);
    const unknown = await client.GET("/api/v1/chat/history/{workflow_id}/{step_id}", {
      headers,
      params: { path: { workflow_id: "chat_none", step_id: "step_1" } },
    });
    assert.equal(unknown.response.status, 404);
    assert.match(unknown.error?.error ?? "", /\S/);
    const empty = await client.POST("/api/v1/chat", { headers, body: { message: " " } });
    assert.equal(empty.response.status, 400);
    assert.match(empty.error?.error ?? "", /message/);
  });

  it("every gRPC port: buf curl lists the methods by reflection and Health/Check answers SERVING", async () => {
    const ports = {
      "memory.v1.MemoryService/CreateSession": memory.urls.grpc,
      "broker.v1.BrokerService/GetConnectionToken": broker.urls.grpc,
      "gateway.v1.GatewayService/GetToken": gateway.urls.grpc,
    };
    for (const [method, url] of Object.entries(ports)) {
      assert.ok(url, method);
      const { stdout: methods } = await bufCurl("--list-methods", url);
      assert.ok(methods.split("\n").includes(method), `${url}: ${methods}`);
      assert.ok(methods.split("\n").includes("grpc.health.v1.Health/Watch"), url);
      const { stdout: health } = await bufCurl("-d", "{}", `${url}/grpc.health.v1.Health/Check`);
      assert.deepEqual(JSON.parse(health), { status: "SERVING" }, url);
    }
  });
});
