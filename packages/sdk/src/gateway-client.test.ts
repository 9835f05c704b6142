import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import type { ConnectionToken } from "./gateway-types.js";
import {
  AttentionRequiredError,
  ConnectionNotActiveError,
  ConnectionRevokedError,
  createGatewayClient,
  GatewayError,
  sdkVersion,
} from "./index.js";
import { type LoopbackServer, sendJson, startLoopbackServer } from "./testing/loopback-server.js";

function token(id: string, expiresAt?: number, accessToken = `at-${id}`): ConnectionToken {
  return {
    connection_id: id,
    auth_type: "oauth2",
    status: "active",
    health_status: "healthy",
    access_token: accessToken,
    token_type: "Bearer",
    ...(expiresAt === undefined ? {} : { expires_at: new Date(expiresAt).toISOString() }),
    scopes: [],
    id_token: "",
    api_key: "",
    username: "",
    password: "",
    name_id: "",
    attributes: {},
  };
}

const errorAnswers: Record<string, [number, unknown]> = {
  "conn-attention": [409, { error: "attention_required" }],
  "conn-revoked": [410, { code: "connection_revoked" }],
  "conn-failed": [400, { code: "connection_not_active", message: "connection is failed" }],
  "conn-missing": [404, { code: "NotFound", message: "connection conn-missing not found" }],
};

describe("gateway client", () => {
  let gateway: LoopbackServer;
  let clock = Date.parse("2030-01-01T00:00:00Z");
  let issued = 0;

  before(async () => {
    gateway = await startLoopbackServer((request, response) => {
      const url = new URL(request.url, "http://x");
      const [, , kind, id] = url.pathname.split("/");
      if (kind === "token" && id in errorAnswers) {
        const [status, body] = errorAnswers[id];
        return sendJson(response, status, body);
      }
      if (kind === "token") {
        issued += 1;
        return sendJson(response, 200, token(id, clock + 120_000, `at-${issued}`));
      }
      if (kind === "refresh" && id in errorAnswers) {
        const [status, body] = errorAnswers[id];
        return sendJson(response, status, body);
      }
      if (kind === "refresh")
        return sendJson(response, 200, { connection_id: id, status: "active" });
      if (kind === "connections" && request.method === "DELETE") {
        return sendJson(response, 200, {
          connection_id: id,
          token_deleted: true,
          reason: url.searchParams.get("reason"),
        });
      }
      if (kind === "connections") {
        return sendJson(response, 200, {
          connections: [{ id: "c1", workspace_id: url.searchParams.get("workspace_id") }],
        });
      }
      sendJson(response, 404, { code: "NotFound", message: "no route" });
    });
  });
  after(() => gateway.close());

  const client = () =>
    createGatewayClient({
      baseUrl: gateway.url,
      apiKey: "agent-key",
      tokenCache: { now: () => clock },
    });

  it("sends the SDK User-Agent, stamped from package.json, and the API key", async () => {
    await client().getToken("conn-ua");
    const request = gateway.requests.at(-1);
    const manifest = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
    const rootVersion = readFileSync(new URL("../../../VERSION", import.meta.url), "utf8").trim();
    assert.equal(sdkVersion, manifest.version);
    assert.equal(sdkVersion, rootVersion);
    assert.equal(request?.headers["user-agent"], `atrium-sdk/${sdkVersion}`);
    assert.equal(request?.headers["x-api-key"], "agent-key");
    assert.equal(request?.url, "/v1/token/conn-ua");
  });

  it("reuses a cached token until shortly before it expires", async () => {
    const gatewayClient = client();
    const first = await gatewayClient.getToken("conn-cache");
    const again = await gatewayClient.getToken("conn-cache");
    assert.equal(again.access_token, first.access_token);
    clock += 120_000 - 30_000; // inside the 30 s skew before expires_at
    const renewed = await gatewayClient.getToken("conn-cache");
    assert.notEqual(renewed.access_token, first.access_token);
  });

  it("shares one gateway call between concurrent requests for the same connection", async () => {
    const before = gateway.requests.length;
    const gatewayClient = client();
    const [a, b] = await Promise.all([
      gatewayClient.getToken("conn-dup"),
      gatewayClient.getToken("conn-dup"),
    ]);
    assert.equal(a, b);
    assert.equal(gateway.requests.length, before + 1);
  });

  it("drops the cached token when the connection is refreshed or revoked", async () => {
    const gatewayClient = client();
    const first = await gatewayClient.getToken("conn-r");
    await gatewayClient.refreshConnection("conn-r");
    const afterRefresh = await gatewayClient.getToken("conn-r");
    assert.notEqual(afterRefresh.access_token, first.access_token);
    const revoked = await gatewayClient.revokeConnection("conn-r", {
      workspaceId: "ws",
      reason: "done",
    });
    assert.equal(revoked.token_deleted, true);
    assert.equal(
      gateway.requests.at(-1)?.url,
      "/v1/connections/conn-r?workspace_id=ws&reason=done",
    );
  });

  it("maps the broker's bodies onto typed errors", async () => {
    const gatewayClient = client();
    await assert.rejects(gatewayClient.getToken("conn-attention"), (error: unknown) => {
      assert.ok(error instanceof AttentionRequiredError);
      assert.equal(error.status, 409);
      assert.equal(error.connectionId, "conn-attention");
      assert.deepEqual(error.body, { error: "attention_required" });
      return true;
    });
    await assert.rejects(gatewayClient.refreshConnection("conn-revoked"), ConnectionRevokedError);
    await assert.rejects(gatewayClient.getToken("conn-revoked"), ConnectionRevokedError);
    await assert.rejects(gatewayClient.getToken("conn-failed"), ConnectionNotActiveError);
    await assert.rejects(gatewayClient.getToken("conn-missing"), (error: unknown) => {
      assert.ok(error instanceof GatewayError);
      assert.ok(!(error instanceof ConnectionRevokedError));
      assert.equal(error.status, 404);
      assert.equal(error.code, "NotFound");
      return true;
    });
  });

  it("lists connections of a workspace", async () => {
    const connections = await client().listConnections({ workspaceId: "ws-1" });
    assert.equal(connections[0].workspace_id, "ws-1");
    assert.equal(gateway.requests.at(-1)?.url, "/v1/connections?workspace_id=ws-1");
  });
});

describe("gateway client: agents", () => {
  let gateway: LoopbackServer;
  before(async () => {
    gateway = await startLoopbackServer((request, response) => {
      const url = new URL(request.url, "http://x");
      const [, , , id] = url.pathname.split("/");
      const agent = { id: id ?? "agent-1", workspace_id: "ws-1", name: "planner" };
      if (request.method === "POST")
        return sendJson(response, 200, { ...agent, ...JSON.parse(request.body.toString()) });
      if (id === undefined) return sendJson(response, 200, { agents: [agent] });
      if (url.searchParams.get("workspace_id") === "ws-other")
        return sendJson(response, 404, { code: "NotFound", message: `agent ${id} not found` });
      if (request.method === "DELETE")
        return sendJson(response, 200, { ...agent, disabled_at: "2030-01-01T00:00:00Z" });
      sendJson(response, 200, agent);
    });
  });
  after(() => gateway.close());

  it("registers, lists, reads and disables agents on /v1/agents", async () => {
    const client = createGatewayClient({ baseUrl: gateway.url });
    const created = await client.createAgent({
      workspace_id: "ws-1",
      name: "planner",
      metadata: { team: "ops" },
    });
    assert.deepEqual(created.metadata, { team: "ops" });
    const sent = gateway.requests.at(-1);
    assert.equal(`${sent?.method} ${sent?.url}`, "POST /v1/agents");
    assert.deepEqual(JSON.parse(String(sent?.body)), {
      workspace_id: "ws-1",
      name: "planner",
      metadata: { team: "ops" },
    });

    const agents = await client.listAgents("ws-1");
    assert.equal(agents[0].id, "agent-1");
    assert.equal(gateway.requests.at(-1)?.url, "/v1/agents?workspace_id=ws-1");
    assert.equal((await client.getAgent("a/2")).id, "a%2F2");
    assert.equal(gateway.requests.at(-1)?.url, "/v1/agents/a%2F2");

    const disabled = await client.disableAgent("a-3", { workspaceId: "ws-1" });
    assert.equal(disabled.disabled_at, "2030-01-01T00:00:00Z");
    const last = gateway.requests.at(-1);
    assert.equal(`${last?.method} ${last?.url}`, "DELETE /v1/agents/a-3?workspace_id=ws-1");
    await assert.rejects(client.getAgent("a-4", { workspaceId: "ws-other" }), (error: unknown) => {
      assert.ok(error instanceof GatewayError);
      assert.equal(error.status, 404);
      return true;
    });
  });
});

describe("gateway client: webhooks", () => {
  let gateway: LoopbackServer;
  before(async () => {
    gateway = await startLoopbackServer((_request, response) =>
      sendJson(response, 200, { id: "wh/1", deliveries: [] }),
    );
  });
  after(() => gateway.close());

  it("sends only the fields to change, the overlap only when given, ids escaped", async () => {
    const client = createGatewayClient({ baseUrl: gateway.url });
    const sent = () => {
      const last = gateway.requests.at(-1);
      return [`${last?.method} ${last?.url}`, String(last?.body)];
    };
    await client.updateWebhook("wh/1", { enabled: false });
    assert.deepEqual(sent(), ["PATCH /v1/webhooks/wh%2F1", '{"enabled":false}']);
    await client.rotateWebhookSecret("wh/1");
    assert.deepEqual(sent(), ["POST /v1/webhooks/wh%2F1/rotate-secret", "{}"]);
    await client.rotateWebhookSecret("wh/1", { overlapSeconds: 0 });
    assert.deepEqual(sent(), ["POST /v1/webhooks/wh%2F1/rotate-secret", '{"overlap_seconds":0}']);
    assert.deepEqual(
      await client.listWebhookDeliveries("wh/1", { status: "failed", limit: 5 }),
      [],
    );
    assert.equal(sent()[0], "GET /v1/webhooks/wh%2F1/deliveries?status=failed&limit=5");
  });
});
