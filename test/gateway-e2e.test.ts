import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, test } from "node:test";
import { type BrokerService, startBrokerService } from "@atrium/broker";
import {
  startTestOidcProvider,
  type TestOidcProvider,
  testBrokerEnv,
} from "@atrium/broker/testing";
import { type GatewayService, startGatewayService } from "@atrium/gateway";
import { createLogger } from "@atrium/kit";
import {
  createTestPostgres,
  needsServer,
  serverAvailable,
  type TestPostgres,
} from "@atrium/kit/testing";
import { ConnectionRevokedError, createGatewayClient } from "@atrium/sdk";
import { type ProtectedResource, startProtectedResource } from "./gateway-e2e-harness.js";
import { freePort, startTcpProxy, type TcpProxy } from "./gateway-tcp-proxy.js";

/**
 * oidc-provider → broker → gateway → SDK, all real and on loopback. The gateway reaches the
 * broker's gRPC port through a proxy the test closes halfway, so the second half runs on the REST
 * fallback.
 */
const logger = createLogger({
  name: "gateway-e2e",
  level: (process.env.E2E_LOG as "info") ?? "silent",
});
const brokerKey = `broker-${randomBytes(8).toString("hex")}`;
const agentKey = `agent-${randomBytes(8).toString("hex")}`;

let pg: TestPostgres | undefined;
let broker: BrokerService;
let gateway: GatewayService;
let grpcProxy: TcpProxy;
let idp: TestOidcProvider;
let resource: ProtectedResource;

before(async () => {
  // Needs PostgreSQL (the test below skips without it, and fails in CI).
  if (!(await serverAvailable("postgres"))) return;
  const gatewayPort = await freePort();
  const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  idp = await startTestOidcProvider({ redirectUri: `${gatewayUrl}/auth/callback` });
  resource = await startProtectedResource(idp.userinfoEndpoint);
  pg = await createTestPostgres();
  broker = await startBrokerService({
    sql: pg.sql,
    logger,
    env: testBrokerEnv({ API_KEYS: brokerKey, ALLOWED_RETURN_DOMAINS: "localhost" }),
  });
  grpcProxy = await startTcpProxy(new URL(broker.urls.grpc ?? ""));
  gateway = await startGatewayService({
    logger,
    env: {
      GATEWAY_HOST: "127.0.0.1",
      GATEWAY_REST_PORT: String(gatewayPort),
      GATEWAY_GRPC_PORT: "0",
      GATEWAY_PUBLIC_URL: gatewayUrl,
      BROKER_URL: broker.urls.rest,
      BROKER_GRPC_URL: grpcProxy.url,
      BROKER_API_KEY: brokerKey,
      GATEWAY_REQUIRE_API_KEY: "true",
      GATEWAY_API_KEYS: agentKey,
      ALLOWED_RETURN_DOMAINS: "localhost",
      CORS_ALLOWED_ORIGINS: "http://localhost:3000",
    },
  });
});

after(async () => {
  await gateway?.stop();
  await grpcProxy?.close();
  await broker?.stop();
  await pg?.drop();
  await resource?.close();
  await idp?.close();
});

test("connect, token, fetch, expire, refresh through the gateway, revoke, 410 as a typed error", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const registered = await fetch(`${broker.urls.rest}/providers`, {
    method: "POST",
    headers: { "x-api-key": brokerKey, "content-type": "application/json" },
    body: JSON.stringify({
      name: "e2e-idp",
      auth_type: "oauth2",
      client_id: idp.clientId,
      client_secret: idp.clientSecret,
      issuer: idp.issuer,
      scopes: ["openid", "offline_access"],
    }),
  });
  assert.equal(registered.status, 200, await registered.clone().text());
  const provider = (await registered.json()) as { id: string };

  const sdk = createGatewayClient({ baseUrl: gateway.urls.rest, apiKey: agentKey });
  const workspaceId = "ws-e2e";

  // Connect: the user's browser goes to the provider and comes back to the gateway's callback.
  const started = await sdk.startConnection({
    provider_id: provider.id,
    workspace_id: workspaceId,
    return_url: "http://localhost:3000/connected",
  });
  const callback = new URL(idp.redirectUri);
  callback.search = (await idp.authorize(started.authorization_url)).toString();
  assert.equal(callback.origin + callback.pathname, `${gateway.urls.rest}/auth/callback`);
  const landed = await fetch(callback, { redirect: "manual" });
  assert.equal(landed.status, 303, await landed.clone().text());
  const returnUrl = new URL(landed.headers.get("location") ?? "");
  assert.equal(returnUrl.origin + returnUrl.pathname, "http://localhost:3000/connected");
  assert.equal(returnUrl.searchParams.get("status"), "active");
  const connectionId = returnUrl.searchParams.get("connection_id") ?? "";
  assert.ok(connectionId);
  assert.equal(gateway.brokerTransport(), "grpc");

  // Token, and a protected resource reached with it.
  const token = await sdk.getToken(connectionId, { workspaceId });
  assert.equal(token.strategy?.type, "oauth2");
  assert.ok(token.access_token);
  const fetcher = sdk.createFetcher(connectionId, { workspaceId });
  const first = await fetcher(`${resource.url}/data`);
  assert.equal(first.status, 200);
  assert.deepEqual(await first.json(), { resource: "secret-data", user: "user-1" });
  const agent = await sdk.createAgent({ workspace_id: workspaceId, name: "agent-7" });
  const session = await sdk.createAgentSession({
    agent_id: agent.id,
    connection_id: connectionId,
    workspace_id: workspaceId,
  });
  assert.equal(session.status, "open");
  await assert.rejects(
    sdk.createAgentSession({
      agent_id: "never-registered",
      connection_id: connectionId,
      workspace_id: workspaceId,
    }),
    (error: unknown) => (error as { status?: number }).status === 404,
  );

  // The broker's gRPC listener goes away; everything below runs on the REST fallback.
  await grpcProxy.close();

  // The stored token expires; retrieval through the gateway refreshes it at the provider, and so
  // does an explicit refresh. The fetcher then sends the newest token.
  await pg?.sql.query(
    "UPDATE broker_connections SET expires_at = now() - interval '1 minute' WHERE id = $1",
    [connectionId],
  );
  const renewed = await sdk.getToken(connectionId, { workspaceId, bypassCache: true });
  assert.notEqual(renewed.access_token, token.access_token);
  assert.equal(gateway.brokerTransport(), "rest");
  const refreshed = await sdk.refreshConnection(connectionId, { workspaceId });
  assert.equal(refreshed.status, "active");
  const latest = await sdk.getToken(connectionId, { workspaceId });
  assert.notEqual(latest.access_token, renewed.access_token);
  const second = await fetcher(`${resource.url}/data`);
  assert.equal(second.status, 200);
  assert.equal(resource.lastAuthorization(), `Bearer ${latest.access_token}`);

  // Revoke through the SDK: the provider is told, the session is closed, the token is gone.
  const revoked = await sdk.revokeConnection(connectionId, { workspaceId, reason: "e2e finished" });
  assert.equal(revoked.token_deleted, true);
  assert.equal(revoked.provider_revoked, true);
  assert.equal((await sdk.getAgentSession(session.id)).status, "closed");
  const disabled = await sdk.disableAgent(agent.id, { workspaceId });
  assert.ok(disabled.disabled_at);
  assert.deepEqual(
    (await sdk.listAgents(workspaceId)).map((a) => [a.id, a.disabled_at]),
    [[agent.id, disabled.disabled_at]],
  );
  await assert.rejects(sdk.getToken(connectionId, { workspaceId }), (error: unknown) => {
    assert.ok(error instanceof ConnectionRevokedError);
    assert.equal(error.status, 410);
    assert.deepEqual(error.body, { code: "connection_revoked" });
    return true;
  });
  await assert.rejects(
    sdk.refreshConnection(connectionId, { workspaceId }),
    ConnectionRevokedError,
  );
  await assert.rejects(fetcher(`${resource.url}/data`), ConnectionRevokedError);
  const again = await sdk.revokeConnection(connectionId, { workspaceId });
  assert.equal(again.revoked_at, revoked.revoked_at);
});
