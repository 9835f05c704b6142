import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import { startBrokerService } from "@atrium/broker";
import { type GatewayService, startGatewayService } from "@atrium/gateway";
import { createLogger } from "@atrium/kit";
import { createTestPostgres, eventually, needsServer } from "@atrium/kit/testing";
import { verifyWebhook } from "@atrium/sdk";
import { testBrokerEnv } from "../packages/broker/src/testing/test-broker.js";
import { startWebhookReceiver } from "../packages/kit/src/testing/webhook-receiver.js";

/**
 * A subscription made through the gateway hears a capture and a revocation made through the
 * gateway; the SDK verifies what arrives; the attempts are readable through the gateway.
 */
const logger = createLogger({ name: "webhooks-e2e", level: "silent" });

async function call(
  gateway: GatewayService,
  method: string,
  path: string,
  body?: unknown,
  key?: string,
) {
  const response = await fetch(`${gateway.urls.rest}${path}`, {
    method,
    headers: {
      ...(key ? { "x-api-key": key } : {}),
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : {} };
}

test("webhooks through the gateway: created with a key, signed events for capture and revocation", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const brokerKey = `broker-${randomBytes(8).toString("hex")}`;
  const agentKey = `agent-${randomBytes(8).toString("hex")}`;
  const receiver = await startWebhookReceiver();
  const pg = await createTestPostgres();
  const broker = await startBrokerService({
    sql: pg.sql,
    logger,
    env: testBrokerEnv({
      API_KEYS: brokerKey,
      WEBHOOK_ALLOW_HTTP_LOOPBACK: "true",
      WEBHOOK_POLL_INTERVAL_MS: "20",
    }),
  });
  const gatewayEnv = {
    GATEWAY_HOST: "127.0.0.1",
    GATEWAY_REST_PORT: "0",
    GATEWAY_GRPC_PORT: "0",
    BROKER_URL: broker.urls.rest,
    BROKER_GRPC_URL: broker.urls.grpc ?? "",
    BROKER_API_KEY: brokerKey,
  };
  const keyed = await startGatewayService({
    logger,
    env: { ...gatewayEnv, GATEWAY_REQUIRE_API_KEY: "true", GATEWAY_API_KEYS: agentKey },
  });
  const open = await startGatewayService({ logger, env: gatewayEnv });
  t.after(async () => {
    await open.stop();
    await keyed.stop();
    await broker.stop();
    await pg.drop();
    await receiver.close();
  });

  const subscription = {
    name: "ops",
    url: receiver.url,
    event_types: ["connection.created", "connection.revoked"],
  };
  const refused = await call(open, "POST", "/v1/webhooks", subscription);
  assert.equal(refused.status, 412, JSON.stringify(refused.body));
  assert.match(refused.body.message, /GATEWAY_REQUIRE_API_KEY/);
  assert.equal((await call(keyed, "POST", "/v1/webhooks", subscription)).status, 401);
  const bad = await call(
    keyed,
    "POST",
    "/v1/webhooks",
    { ...subscription, url: "ftp://x" },
    agentKey,
  );
  assert.equal(bad.status, 400);
  assert.match(bad.body.message, /^url /);
  const created = await call(keyed, "POST", "/v1/webhooks", subscription, agentKey);
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const secret: string = created.body.secret;
  assert.match(secret, /^whsec_/);
  const listed = await call(keyed, "GET", "/v1/webhooks", undefined, agentKey);
  assert.equal(listed.body.webhooks[0].secret ?? "", "");

  // A static key, validated against the receiver (it answers any GET with 204).
  const provider = await fetch(`${broker.urls.rest}/providers`, {
    method: "POST",
    headers: { "x-api-key": brokerKey, "content-type": "application/json" },
    body: JSON.stringify({ name: "keys", auth_type: "api_key", api_base_url: receiver.url }),
  }).then((r) => r.json() as Promise<{ id: string }>);
  const captured = await call(keyed, "POST", "/v1/capture-credential", {
    provider_id: provider.id,
    workspace_id: "ws-1",
    api_key: "k-1",
  });
  assert.equal(captured.status, 200, JSON.stringify(captured.body));
  const revoked = await call(
    keyed,
    "DELETE",
    `/v1/connections/${captured.body.id}?workspace_id=ws-1`,
    undefined,
    agentKey,
  );
  assert.equal(revoked.status, 200, JSON.stringify(revoked.body));

  const posts = () => receiver.received.filter((hit) => hit.id !== "");
  await eventually("both events arrive", () => posts().length === 2);
  const events = await Promise.all(
    posts().map((hit) =>
      verifyWebhook(
        secret,
        {
          "webhook-id": hit.id,
          "webhook-timestamp": hit.timestamp,
          "webhook-signature": hit.signature,
        },
        hit.body,
      ),
    ),
  );
  assert.deepEqual(
    events.map((event) => [event.type, event.data.connection_id, event.data.workspace_id]).sort(),
    [
      ["connection.created", captured.body.id, "ws-1"],
      ["connection.revoked", captured.body.id, "ws-1"],
    ],
  );

  await eventually("both deliveries are recorded as delivered", async () => {
    const page = await call(
      keyed,
      "GET",
      `/v1/webhooks/${created.body.id}/deliveries`,
      undefined,
      agentKey,
    );
    return (
      page.body.deliveries?.length === 2 &&
      page.body.deliveries.every(
        (d: { status: string; attempts: { status_code: number }[] }) =>
          d.status === "delivered" && d.attempts[0].status_code === 204,
      )
    );
  });

  // Rotation through the gateway: receivers on either secret verify during the overlap.
  const rotatePath = `/v1/webhooks/${created.body.id}/rotate-secret`;
  assert.equal((await call(open, "POST", rotatePath, {})).status, 412);
  const rotated = await call(keyed, "POST", rotatePath, {}, agentKey);
  assert.equal(rotated.status, 200, JSON.stringify(rotated.body));
  const newSecret: string = rotated.body.secret;
  assert.match(newSecret, /^whsec_/);
  assert.notEqual(newSecret, secret);
  assert.ok(rotated.body.previous_secret_expires_at);
  const before = posts().length;
  const second = await call(keyed, "POST", "/v1/capture-credential", {
    provider_id: provider.id,
    workspace_id: "ws-2",
    api_key: "k-2",
  });
  assert.equal(second.status, 200, JSON.stringify(second.body));
  await eventually("the event after the rotation arrives", () => posts().length === before + 1);
  const hit = posts()[before];
  const headers = {
    "webhook-id": hit.id,
    "webhook-timestamp": hit.timestamp,
    "webhook-signature": hit.signature,
  };
  for (const either of [secret, newSecret]) {
    const event = await verifyWebhook(either, headers, hit.body);
    assert.equal(event.data.workspace_id, "ws-2");
  }

  // A delivered delivery is not redelivered; the gateway passes the broker's answer on.
  const page = await call(
    keyed,
    "GET",
    `/v1/webhooks/${created.body.id}/deliveries`,
    undefined,
    agentKey,
  );
  const redeliverPath = `/v1/webhooks/${created.body.id}/deliveries/${page.body.deliveries[0].id}/redeliver`;
  assert.equal((await call(open, "POST", redeliverPath, {})).status, 412);
  const refusedRedelivery = await call(keyed, "POST", redeliverPath, {}, agentKey);
  assert.equal(refusedRedelivery.status, 412, JSON.stringify(refusedRedelivery.body));
  assert.match(refusedRedelivery.body.message, /only a failed delivery is redelivered/);
});
