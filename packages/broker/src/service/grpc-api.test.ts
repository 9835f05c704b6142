import assert from "node:assert/strict";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { needsServer } from "@atrium/kit/testing";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { storeConnections } from "../testing/stored-connections.js";
import {
  startBrokerOnTestPostgres,
  type TestBroker,
  testBrokerEnv,
} from "../testing/test-broker.js";

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
  const { broker } = await startBrokerOnTestPostgres(t);
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
  const { broker: fenced, another } = await startBrokerOnTestPostgres(
    t,
    testBrokerEnv({ ALLOWED_CIDRS: "10.0.0.0/8" }),
  );
  const proxied = await another(
    testBrokerEnv({ ALLOWED_CIDRS: "10.0.0.0/8", TRUSTED_PROXIES: "127.0.0.1/32" }),
  );
  const direct = await another();
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
  const { broker } = await startBrokerOnTestPostgres(t);
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

test("gRPC: GetConnectionTokens answers each retrieval as GetConnectionToken would, with its own caller", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const env = testBrokerEnv({
    ALLOWED_CIDRS: "10.0.0.0/8,127.0.0.1/32",
    TRUSTED_PROXIES: "127.0.0.1/32",
  });
  const { broker, pg } = await startBrokerOnTestPostgres(t, env);
  const call = brokerClient(broker, t);
  const provider = await broker.call("POST", "/providers", {
    name: "batched",
    auth_type: "api_key",
  });
  const stored = (id: string, workspaceId: string, status: string) => ({
    id,
    workspaceId,
    providerId: String(provider.body.id),
    authType: "api_key",
    status,
    credential: { api_key: `key-${id}` },
  });
  await storeConnections(pg.sql, env.ENCRYPTION_KEY, [
    stored("conn-a", "w1", "active"),
    stored("conn-b", "w2", "active"),
    stored("conn-r", "w1", "revoked"),
  ]);

  const retrieval = (id: string, forwardedFor: string, extra: Record<string, string> = {}) => ({
    request: { id, workspace_id: extra.workspace_id ?? "" },
    forwarded_for: forwardedFor,
    user_agent: extra.user_agent ?? "",
  });
  const answer = await call(
    "GetConnectionTokens",
    {
      retrievals: [
        retrieval("conn-a", "10.1.1.1", { user_agent: "agent-a" }),
        retrieval("conn-a", "10.2.2.2"),
        retrieval("conn-missing", "10.3.3.3"),
        retrieval("conn-b", "10.4.4.4", { workspace_id: "w1" }),
        retrieval("conn-r", "10.5.5.5"),
        retrieval("conn-a", "203.0.113.7"),
      ],
    },
    broker.apiKey,
  );
  assert.equal(answer.error, null);
  const results = answer.response?.results as {
    token?: { api_key: string; connection_id: string };
    error?: {
      code: number;
      message: string;
      error_info?: { reason: string; domain: string; metadata: Record<string, string> };
    };
  }[];
  assert.deepEqual(
    results.map((r) => r.token?.api_key ?? r.error?.code),
    [
      "key-conn-a",
      "key-conn-a",
      grpc.status.NOT_FOUND,
      grpc.status.NOT_FOUND,
      grpc.status.FAILED_PRECONDITION,
      grpc.status.PERMISSION_DENIED,
    ],
  );
  // The fixed error's reason travels as data, as GetConnectionToken's status details carry it.
  assert.deepEqual(results[4].error?.error_info, {
    reason: "connection_revoked",
    domain: "atrium",
    metadata: { connection_id: "conn-r" },
  });

  // One audit row per served retrieval, each with its own caller; none for the refused ones.
  const audit = await pg.sql.query<{ caller_ip: string; user_agent: string }>(
    "SELECT caller_ip, user_agent FROM audit_events WHERE event_type = 'token.retrieved' ORDER BY caller_ip",
  );
  assert.deepEqual(
    audit.rows.map((row) => row.caller_ip),
    ["10.1.1.1", "10.2.2.2"],
  );
  assert.equal(audit.rows[0].user_agent, "agent-a");
  assert.match(audit.rows[1].user_agent, /grpc-node-js/);

  const tooMany = await call(
    "GetConnectionTokens",
    { retrievals: Array.from({ length: 101 }, () => retrieval("conn-a", "")) },
    broker.apiKey,
  );
  assert.equal(tooMany.error?.code, grpc.status.INVALID_ARGUMENT);
  assert.equal(
    (await call("GetConnectionTokens", { retrievals: [] })).error?.code,
    grpc.status.UNAUTHENTICATED,
  );
});

test("gRPC: GetConnectionTokens believes a retrieval's forwarded address only from a trusted proxy", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const env = testBrokerEnv();
  const { broker, pg } = await startBrokerOnTestPostgres(t, env);
  const call = brokerClient(broker, t);
  const provider = await broker.call("POST", "/providers", { name: "p", auth_type: "api_key" });
  await storeConnections(pg.sql, env.ENCRYPTION_KEY, [
    {
      id: "conn-a",
      workspaceId: "w1",
      providerId: String(provider.body.id),
      authType: "api_key",
      credential: { api_key: "k" },
    },
  ]);
  const answer = await call(
    "GetConnectionTokens",
    { retrievals: [{ request: { id: "conn-a" }, forwarded_for: "10.9.9.9" }] },
    broker.apiKey,
  );
  assert.equal(answer.error, null);
  const audit = await pg.sql.query<{ caller_ip: string }>(
    "SELECT caller_ip FROM audit_events WHERE event_type = 'token.retrieved'",
  );
  assert.deepEqual(
    audit.rows.map((row) => row.caller_ip),
    ["127.0.0.1"],
  );
});
