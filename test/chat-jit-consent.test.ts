// Issue 32 goal: a step that needs a connection yields with the gateway's authorization URL; the
// consent is completed against a local OAuth provider, as a browser would, and the step finishes
// by itself: oidc-provider → broker → gateway, two agent hosts over one PostgreSQL and Redis.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { startBrokerService } from "@atrium/broker";
import { startTestOidcProvider, testBrokerEnv } from "@atrium/broker/testing";
import { startAgentService, type TraceEvent } from "@atrium/chat";
import { startGatewayService } from "@atrium/gateway";
import { createLogger } from "@atrium/kit";
import { createTestPostgres, needsServer, redisUrl } from "@atrium/kit/testing";
import { startProtectedResource } from "./gateway-e2e-harness.js";
import { freePort } from "./gateway-tcp-proxy.js";

interface Answer {
  status: string;
  step_id: string;
  pause: number;
  reason: string;
  pending: { kind: string; provider?: string; authorization_url?: string; detail: string }[];
  events: TraceEvent[];
}

const logger = (name: string) => createLogger({ name, level: "silent" });
const brokerKey = `broker-${randomBytes(8).toString("hex")}`;
const agentKey = `agent-${randomBytes(8).toString("hex")}`;

const call = async (base: string, path: string, body?: unknown) => {
  const res = await fetch(`${base}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Answer };
};

/** The provider, the broker and the gateway of the user's connections, all on loopback. */
async function credentialSide(t: TestContext) {
  const gatewayUrl = `http://127.0.0.1:${await freePort()}`;
  const idp = await startTestOidcProvider({ redirectUri: `${gatewayUrl}/auth/callback` });
  t.after(() => idp.close());
  const resource = await startProtectedResource(idp.userinfoEndpoint);
  t.after(() => resource.close());
  const db = await createTestPostgres();
  t.after(() => db.drop());
  const broker = await startBrokerService({
    sql: db.sql,
    logger: logger("broker"),
    env: testBrokerEnv({ API_KEYS: brokerKey }),
  });
  t.after(() => broker.stop());
  const gateway = await startGatewayService({
    logger: logger("gateway"),
    env: {
      GATEWAY_HOST: "127.0.0.1",
      GATEWAY_REST_PORT: new URL(gatewayUrl).port,
      GATEWAY_GRPC_PORT: "0",
      GATEWAY_PUBLIC_URL: gatewayUrl,
      BROKER_URL: broker.urls.rest,
      BROKER_API_KEY: brokerKey,
      GATEWAY_REQUIRE_API_KEY: "true",
      GATEWAY_API_KEYS: agentKey,
    },
  });
  t.after(() => gateway.stop());
  const registered = await fetch(`${broker.urls.rest}/providers`, {
    method: "POST",
    headers: { "x-api-key": brokerKey, "content-type": "application/json" },
    body: JSON.stringify({
      name: "team-chat",
      auth_type: "oauth2",
      client_id: idp.clientId,
      client_secret: idp.clientSecret,
      issuer: idp.issuer,
      scopes: ["openid", "offline_access"],
    }),
  });
  assert.equal(registered.status, 200, await registered.clone().text());
  const provider = ((await registered.json()) as { id: string }).id;
  return { gatewayUrl, idp, resource, provider };
}

async function agentHosts(t: TestContext, gatewayUrl: string) {
  const db = await createTestPostgres();
  t.after(() => db.drop());
  const hosts: string[] = [];
  for (const name of ["a", "b"]) {
    const dir = await mkdtemp(join(tmpdir(), `agent-${name}-`));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const host = await startAgentService({
      env: {
        AGENT_PORT: "0",
        AGENT_HOST: "127.0.0.1",
        TRACES_DIR: dir,
        DATABASE_URL: db.url,
        REDIS_URL: redisUrl(),
        GATEWAY_URL: gatewayUrl,
        GATEWAY_API_KEY: agentKey,
        AGENT_ALLOWED_HOSTS: "127.0.0.1",
        CONSENT_POLL_INTERVAL: "100ms",
      },
      logger: logger(`agent-${name}`),
    });
    t.after(() => host.stop());
    hosts.push(`${host.urls.rest}/api/v1`);
  }
  return hosts;
}

test("a step that needs a connection yields with an authorization URL and finishes by itself once the consent is given", async (t) => {
  if (!(await needsServer(t, "postgres")) || !(await needsServer(t, "redis"))) return;
  const { gatewayUrl, idp, resource, provider } = await credentialSide(t);
  const [a, b] = await agentHosts(t, gatewayUrl);
  const workflowId = `consent_${process.pid}_${Date.now()}`;

  const asked = await call(a, "/chat", {
    message: "send a message to the team: the release is out",
    workflow_id: workflowId,
    context: {
      role: "communicator",
      provider,
      workspace_id: "ws-jit",
      send_url: `${resource.url}/messages`,
      approved: true,
    },
  });
  assert.equal(asked.status, 200);
  assert.equal(asked.body.status, "yield");
  assert.equal(asked.body.pending.length, 1);
  const item = asked.body.pending[0];
  assert.deepEqual(Object.keys(item).sort(), ["authorization_url", "detail", "kind", "provider"]);
  assert.equal(item.kind, "consent");
  assert.equal(item.provider, provider);
  assert.match(item.detail, /no active connection to provider/);
  const authorizationUrl = new URL(item.authorization_url ?? "");
  assert.equal(authorizationUrl.origin, new URL(idp.issuer).origin);
  assert.equal(authorizationUrl.searchParams.get("redirect_uri"), `${gatewayUrl}/auth/callback`);
  const stepId = asked.body.step_id;
  const path = `/chat/runs/${workflowId}/${stepId}`;
  assert.equal(resource.lastAuthorization(), undefined, "nothing was sent before the consent");

  // The person refuses at the provider: the callback fails, no connection is made, and the step
  // keeps waiting at its pause (several watch intervals later, on either host).
  const state = authorizationUrl.searchParams.get("state") ?? "";
  // What the provider sends the browser back with on a refusal (RFC 6749 4.1.2.1, RFC 9207 iss).
  const refusal = new URLSearchParams({ error: "access_denied", state, iss: idp.issuer });
  const denied = await fetch(`${gatewayUrl}/auth/callback?${refusal}`);
  assert.ok(denied.status >= 400 && denied.status < 500, `denied: ${denied.status}`);
  await sleep(600);
  for (const host of [a, b]) {
    const waiting = await call(host, path);
    assert.equal(waiting.body.status, "yielded");
    assert.equal(waiting.body.pause, 1);
  }

  // The person opens the same URL again and consents; the browser lands on the gateway.
  const callback = new URL(`${gatewayUrl}/auth/callback`);
  callback.search = (await idp.authorize(authorizationUrl.href)).toString();
  const landed = await fetch(callback);
  assert.equal(landed.status, 200, await landed.clone().text());
  const connection = ((await landed.json()) as { connection: { id: string; status: string } })
    .connection;
  assert.equal(connection.status, "active");

  // No resume call: a host's watch sees the connection and the step goes on by itself.
  let done = await call(b, path);
  for (let i = 0; i < 200 && done.body.status !== "completed"; i++) {
    await sleep(50);
    done = await call(b, path);
  }
  assert.equal(done.body.status, "completed", JSON.stringify(done.body));
  assert.match(resource.lastAuthorization() ?? "", /^Bearer /);

  for (const host of [a, b]) {
    // The run is recorded as ended just before its last step_complete is written (docs/chat.md).
    const historyPath = `/chat/history/${workflowId}/${stepId}`;
    let events = (await call(host, historyPath)).body.events;
    for (let i = 0; i < 200 && events.filter((e) => e.type === "step_complete").length < 2; i++) {
      await sleep(25);
      events = (await call(host, historyPath)).body.events;
    }
    const thoughts = events.filter((e) => e.type === "thinking");
    const phases = thoughts.map((e) => e.data.phase);
    assert.equal(phases.filter((p) => p === "pause").length, 1, "one pause");
    const resumed = thoughts.filter((e) => e.data.phase === "resume");
    assert.equal(resumed.length, 1, "one resumption");
    assert.match(String(resumed[0].data.thought), new RegExp(`connection ${connection.id}`));
    assert.deepEqual(
      events.filter((e) => e.type === "tool_start").map((e) => e.data.tool),
      ["connection.find", "connection.send"],
    );
    assert.deepEqual(
      events.filter((e) => e.type === "step_complete").map((e) => e.data.status),
      ["yield", "success"],
    );
    assert.doesNotMatch(
      JSON.stringify(events),
      /state=/,
      "the flow's state stays out of the trace",
    );
  }
});
