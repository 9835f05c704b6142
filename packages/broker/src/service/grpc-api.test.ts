import assert from "node:assert/strict";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { createTestPostgres, needsServer } from "@atrium/kit/testing";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { startTestBroker, type TestBroker, testBrokerEnv } from "../testing/test-broker.js";

type Unary = (
  request: Record<string, unknown>,
  metadata: grpc.Metadata,
  callback: (error: grpc.ServiceError | null, response?: Record<string, unknown>) => void,
) => void;

type Call = (
  method: string,
  request: Record<string, unknown>,
  key?: string,
  metadata?: Record<string, string>,
) => Promise<{ error: grpc.ServiceError | null; response?: Record<string, unknown> }>;

/** A @grpc/grpc-js client built from the .proto alone, closed by `t.after`. */
function brokerClient(broker: TestBroker, t: { after(fn: () => void): void }): Call {
  const root = fileURLToPath(new URL("../../../../", import.meta.url));
  const definition = protoLoader.loadSync("broker/v1/broker.proto", {
    includeDirs: [`${root}proto`, `${root}node_modules/google-proto-files`],
    keepCase: true,
  });
  const loaded = grpc.loadPackageDefinition(definition) as unknown as {
    broker: {
      v1: {
        BrokerService: new (address: string, credentials: grpc.ChannelCredentials) => grpc.Client;
      };
    };
  };
  const address = new URL(broker.service.urls.grpc as string).host;
  const client = new loaded.broker.v1.BrokerService(address, grpc.credentials.createInsecure());
  t.after(() => client.close());
  return (method, request, key, extra = {}) =>
    new Promise((resolve) => {
      const metadata = new grpc.Metadata();
      if (key) metadata.set("x-api-key", key);
      for (const [name, value] of Object.entries(extra)) metadata.set(name, value);
      (client as unknown as Record<string, Unary>)[method].call(
        client,
        request,
        metadata,
        (error, response) => resolve({ error, response }),
      );
    });
}

test("gRPC: an independent client over the same .proto gets the same auth and errors", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const pg = await createTestPostgres();
  const broker = await startTestBroker({ sql: pg.sql });
  t.after(async () => {
    await broker.stop();
    await pg.drop();
  });
  const call = brokerClient(broker, t);

  assert.equal((await call("ListProviders", {})).error?.code, grpc.status.UNAUTHENTICATED);
  assert.equal((await call("ListProviders", {}, "wrong")).error?.code, grpc.status.UNAUTHENTICATED);
  const invalid = await call(
    "CreateProvider",
    { provider: { name: "x", auth_type: "nope" } },
    broker.apiKey,
  );
  assert.equal(invalid.error?.code, grpc.status.INVALID_ARGUMENT);
  const created = await call(
    "CreateProvider",
    {
      provider: {
        name: "grpc-keyed",
        auth_type: "api_key",
        api_base_url: "https://api.example.com",
      },
    },
    broker.apiKey,
  );
  assert.equal(created.error, null);
  assert.equal(created.response?.name, "grpc-keyed");
  // update_mask names what to change; other fields in the message are ignored.
  const updated = await call(
    "UpdateProvider",
    {
      id: created.response?.id,
      provider: { description: "via gRPC", api_base_url: "https://ignored.example.com" },
      update_mask: { paths: ["description"] },
    },
    broker.apiKey,
  );
  assert.equal(updated.error, null);
  assert.equal(updated.response?.description, "via gRPC");
  assert.equal(updated.response?.api_base_url, "https://api.example.com");
  const listed = await call("ListProviders", {}, broker.apiKey);
  assert.equal((listed.response?.providers as unknown[] | undefined)?.length, 1);
  const missing = await call("GetConnectionToken", { id: "no-such-connection" }, broker.apiKey);
  assert.equal(missing.error?.code, grpc.status.NOT_FOUND);
});

test("gRPC: ALLOWED_CIDRS and TRUSTED_PROXIES apply as on REST; audit caller_ip recorded", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const pg = await createTestPostgres();
  const fenced = await startTestBroker({
    sql: pg.sql,
    env: testBrokerEnv({ ALLOWED_CIDRS: "10.0.0.0/8" }),
  });
  const proxied = await startTestBroker({
    sql: pg.sql,
    env: testBrokerEnv({ ALLOWED_CIDRS: "10.0.0.0/8", TRUSTED_PROXIES: "127.0.0.1/32" }),
  });
  const direct = await startTestBroker({ sql: pg.sql });
  t.after(async () => {
    await Promise.all([fenced.stop(), proxied.stop(), direct.stop()]);
    await pg.drop();
  });
  const viaFenced = brokerClient(fenced, t);
  const viaProxy = brokerClient(proxied, t);
  const viaDirect = brokerClient(direct, t);
  const spoofed = { "x-forwarded-for": "10.1.2.3", "x-atrium-client-ip": "10.9.9.9" };

  const refused = await viaFenced("ListProviders", {}, fenced.apiKey, spoofed);
  assert.equal(refused.error?.code, grpc.status.PERMISSION_DENIED);
  assert.equal((await fenced.call("GET", "/providers", undefined, spoofed)).status, 403);

  const keyed = (name: string) => ({
    provider: { name, auth_type: "api_key", api_base_url: "https://api.example.com" },
  });
  const created = await viaProxy("CreateProvider", keyed("via-proxy"), proxied.apiKey, {
    "x-forwarded-for": "198.51.100.1, 10.1.2.3",
  });
  assert.equal(created.error, null);
  const outside = await viaProxy("ListProviders", {}, proxied.apiKey, {
    "x-forwarded-for": "203.0.113.7",
  });
  assert.equal(outside.error?.code, grpc.status.PERMISSION_DENIED);
  const unproxied = await viaDirect("CreateProvider", keyed("direct"), direct.apiKey, spoofed);
  assert.equal(unproxied.error, null);

  const audit = await viaDirect(
    "ListAuditEvents",
    { event_type: "provider.created" },
    direct.apiKey,
  );
  const events = audit.response?.events as { caller_ip: string; resource_id: string }[];
  const ipOf = (id: unknown) => events.find((e) => e.resource_id === id)?.caller_ip;
  assert.equal(ipOf(created.response?.id), "10.1.2.3");
  assert.equal(ipOf(unproxied.response?.id), "127.0.0.1");
});

test("gRPC: agent lifecycle and its audit events", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const pg = await createTestPostgres();
  const broker = await startTestBroker({ sql: pg.sql });
  t.after(async () => {
    await broker.stop();
    await pg.drop();
  });
  const call = brokerClient(broker, t);

  const invalid = await call("CreateAgent", { workspace_id: "ws" }, broker.apiKey);
  assert.equal(invalid.error?.code, grpc.status.INVALID_ARGUMENT);
  assert.match(String(invalid.error?.details), /name is required/);
  const created = await call(
    "CreateAgent",
    { workspace_id: "ws", name: "grpc-agent", description: "d", metadata: { k: "v" } },
    broker.apiKey,
  );
  assert.equal(created.error, null);
  const id = created.response?.id;
  const duplicate = await call(
    "CreateAgent",
    { workspace_id: "ws", name: "grpc-agent" },
    broker.apiKey,
  );
  assert.equal(duplicate.error?.code, grpc.status.ALREADY_EXISTS);
  const listed = await call("ListAgents", { workspace_id: "ws" }, broker.apiKey);
  assert.equal((listed.response?.agents as unknown[] | undefined)?.length, 1);
  assert.equal((await call("GetAgent", { id }, broker.apiKey)).response?.name, "grpc-agent");
  assert.equal(
    (await call("GetAgent", { id: "nope" }, broker.apiKey)).error?.code,
    grpc.status.NOT_FOUND,
  );
  const disabled = await call("DisableAgent", { id }, broker.apiKey);
  assert.ok(disabled.response?.disabled_at);
  const session = await call(
    "CreateAgentSession",
    { agent_id: id, connection_id: "missing" },
    broker.apiKey,
  );
  assert.equal(session.error?.code, grpc.status.NOT_FOUND, "the connection is checked first");
  const audit = await call("ListAuditEvents", { resource_id: id }, broker.apiKey);
  assert.deepEqual(
    (audit.response?.events as { event_type: string }[] | undefined)?.map((e) => e.event_type),
    ["agent.disabled", "agent.created"],
  );
});
