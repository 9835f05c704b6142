import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { createPgliteSql, createPostgresSql, type Sql } from "@atrium/kit";
import {
  createTestPostgres,
  eventually,
  needsServer,
  startWebhookReceiver,
} from "@atrium/kit/testing";
import { startTestBroker, type TestBroker } from "../testing/test-broker.js";
import {
  revoked,
  signatureValid,
  startWebhookBroker,
  subscribe,
  webhookEnv,
} from "../testing/webhook-fixture.js";
import { enqueueWebhookEvent } from "./webhook-events.js";

interface DeliveryView {
  id: string;
  status: string;
  attempt_count?: number;
  last_error?: string;
  attempts: { attempt: number; status_code?: number; error?: string }[];
}

async function deliveries(broker: TestBroker, webhookId: string): Promise<DeliveryView[]> {
  const listed = await broker.call("GET", `/webhooks/${webhookId}/deliveries`);
  assert.equal(listed.status, 200, JSON.stringify(listed.body));
  return (listed.body.deliveries as DeliveryView[] | undefined) ?? [];
}

test("delivery: signed per Standard Webhooks, retried with backoff on 500, one id throughout", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const { receiver, pg, broker } = await startWebhookBroker(t, {
    answer: (index) => (index < 2 ? 500 : 204),
  });
  const hook = await subscribe(broker, receiver.url);
  assert.match(hook.secret, /^whsec_/);
  await enqueueWebhookEvent(pg.sql, "connection.revoked", revoked(1));

  await eventually("the third attempt is answered", () => receiver.received.length === 3);
  const [first, second, third] = receiver.received;
  assert.ok(first.id.startsWith("msg_"));
  assert.deepEqual(
    receiver.received.map((hit) => hit.id),
    [first.id, first.id, first.id],
    "webhook-id is stable across retries",
  );
  for (const hit of receiver.received) {
    assert.ok(signatureValid(hook.secret, hit), "signature verifies with the subscription secret");
    assert.match(hit.timestamp, /^\d{10}$/);
    assert.equal(hit.body, first.body, "every retry carries the same body");
  }
  // Lower bounds only: the first retry waits at least half the base, the second half of 4×.
  assert.ok(second.receivedAt - first.receivedAt >= 25);
  assert.ok(third.receivedAt - second.receivedAt >= 100);
  const body = JSON.parse(first.body);
  assert.equal(body.type, "connection.revoked");
  assert.equal(body.data.connection_id, "conn-1");
  assert.ok(!Number.isNaN(Date.parse(body.timestamp)));

  await eventually("the delivery is marked delivered", async () => {
    const [delivery] = await deliveries(broker, hook.id);
    return delivery?.status === "delivered";
  });
  const [delivery] = await deliveries(broker, hook.id);
  assert.equal(delivery.id, first.id);
  assert.equal(delivery.attempt_count, 3);
  assert.deepEqual(
    delivery.attempts.map((a) => [a.attempt, a.status_code, a.error ?? ""]),
    [
      [1, 500, "HTTP 500"],
      [2, 500, "HTTP 500"],
      [3, 204, ""],
    ],
  );
  assert.ok(!broker.logs.join("").includes(hook.secret.slice(6)), "the secret is never logged");
});

test("delivery: redirects are not followed; a receiver that keeps failing is given up after the window", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const { receiver, pg, broker } = await startWebhookBroker(t, {
    answer: (index) => (index === 0 ? 302 : 503),
    env: { WEBHOOK_RETRY_WINDOW_SECONDS: "1" },
  });
  const hook = await subscribe(broker, receiver.url);
  await enqueueWebhookEvent(pg.sql, "connection.revoked", revoked(1));
  await eventually("the delivery is marked failed", async () => {
    const [delivery] = await deliveries(broker, hook.id);
    return delivery?.status === "failed";
  });
  const [delivery] = await deliveries(broker, hook.id);
  assert.equal(delivery.attempts[0].error, "redirect 302 not followed");
  assert.ok(delivery.attempts.length >= 2);
  assert.equal(delivery.attempts.length, receiver.received.length);
  assert.equal(delivery.last_error, "HTTP 503");
  const failedAfter = receiver.received.length;
  // Nothing is claimed once failed; a pass finds nothing due.
  assert.equal((await broker.service.webhookWorker.runOnce()).claimed, 0);
  assert.equal(receiver.received.length, failedAfter);
});

test("delivery: a host now pointing at a non-public address is refused as a failed attempt", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const { receiver, pg, broker } = await startWebhookBroker(t, {
    env: { WEBHOOK_ALLOW_HTTP_LOOPBACK: "false", WEBHOOK_DELIVERY: "false" },
  });
  const hook = await subscribe(broker, "https://hooks.example/atrium");
  // What a name re-pointed after it was vetted at create looks like at delivery: `localhost`
  // resolves to loopback, which only the development switch allows.
  const port = new URL(receiver.url).port;
  await pg.sql.query("UPDATE broker_webhooks SET url = $1", [`https://localhost:${port}/hook`]);
  await enqueueWebhookEvent(pg.sql, "connection.revoked", revoked(1));
  const pass = await broker.service.webhookWorker.runOnce();
  assert.deepEqual({ claimed: pass.claimed, retrying: pass.retrying }, { claimed: 1, retrying: 1 });
  assert.equal(receiver.received.length, 0, "nothing was sent");
  const [delivery] = await deliveries(broker, hook.id);
  assert.equal(delivery.status, "pending");
  assert.equal(delivery.last_error, "host resolves to a non-public address; not sent");
  assert.deepEqual(
    delivery.attempts.map((a) => [a.attempt, a.status_code ?? 0]),
    [[1, 0]],
  );
});

test("delivery: two broker instances on one database send each event once", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const receiver = await startWebhookReceiver();
  const pg = await createTestPostgres();
  const second = await createPostgresSql({ url: pg.url, max: 4 });
  const env = webhookEnv({ WEBHOOK_DELIVERY: "false" });
  const a = await startTestBroker({ sql: pg.sql, env });
  const b = await startTestBroker({ sql: second, env });
  t.after(async () => {
    await a.stop();
    await b.stop();
    await second.close();
    await pg.drop();
    await receiver.close();
  });
  await subscribe(a, receiver.url);
  const events = 60;
  for (let n = 0; n < events; n++) {
    await enqueueWebhookEvent(pg.sql, "connection.revoked", revoked(n));
  }
  // Passes of both instances race over the same rows, several times each.
  const passes = await Promise.all(
    [a, b, a, b].map((broker) => broker.service.webhookWorker.runOnce()),
  );
  assert.equal(
    passes.reduce((sum, pass) => sum + pass.delivered, 0),
    events,
  );
  const ids = receiver.received.map((hit) => hit.id);
  assert.equal(ids.length, events, "no event was sent twice");
  assert.equal(new Set(ids).size, events);
});

test("delivery: an event written before a crash arrives after the restart, signed, once", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  let answer: number | "hang" = "hang";
  const {
    receiver,
    pg,
    broker: crashed,
    another,
  } = await startWebhookBroker(t, { answer: () => answer });
  const hook = await subscribe(crashed, receiver.url);
  await enqueueWebhookEvent(pg.sql, "connection.revoked", revoked(1));
  await eventually("the first request is in flight", () => receiver.received.length === 1);
  // The broker goes away mid-request: the row stays due, no attempt is counted.
  await crashed.stop();
  const { rows } = await pg.sql.query<{ status: string; attempts: number; lease_owner: null }>(
    "SELECT status, attempts, lease_owner FROM broker_webhook_deliveries",
  );
  assert.deepEqual(rows, [{ status: "pending", attempts: 0, lease_owner: null }]);

  answer = 204;
  const restarted = await another(crashed.env);
  await eventually(
    "the event is delivered after the restart",
    () => receiver.received.length === 2,
  );
  const [, delivered] = receiver.received;
  assert.equal(delivered.id, receiver.received[0].id);
  assert.ok(signatureValid(hook.secret, delivered));
  await eventually("the delivery is marked delivered", async () => {
    const [delivery] = await deliveries(restarted, hook.id);
    return delivery?.status === "delivered";
  });
  assert.equal(receiver.received.length, 2);
});

test("delivery: a lease left by a crashed instance holds the row until it runs out", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const { receiver, pg, broker } = await startWebhookBroker(t, {
    env: { WEBHOOK_DELIVERY: "false" },
  });
  const hook = await subscribe(broker, receiver.url);
  await enqueueWebhookEvent(pg.sql, "connection.revoked", revoked(1));
  // What an instance killed mid-request leaves behind: its lease on the row, nothing else.
  await pg.sql.query(
    "UPDATE broker_webhook_deliveries SET lease_owner = 'crashed', lease_until = now() + interval '1 hour'",
  );
  assert.equal((await broker.service.webhookWorker.runOnce()).claimed, 0);
  assert.equal(receiver.received.length, 0);
  await pg.sql.query(
    "UPDATE broker_webhook_deliveries SET lease_until = now() - interval '1 second'",
  );
  assert.equal((await broker.service.webhookWorker.runOnce()).delivered, 1);
  assert.equal(receiver.received.length, 1);
  assert.ok(signatureValid(hook.secret, receiver.received[0]));
});

test("delivery: the embedded PGlite database claims and delivers too", {
  timeout: 60_000,
}, async (t) => {
  const receiver = await startWebhookReceiver();
  const sql: Sql = await createPgliteSql({
    dataDir: mkdtempSync(join(tmpdir(), "broker-webhooks-")),
  });
  const broker = await startTestBroker({ sql, env: webhookEnv() });
  t.after(async () => {
    await broker.stop();
    await sql.close();
    await receiver.close();
  });
  const hook = await subscribe(broker, receiver.url);
  await enqueueWebhookEvent(sql, "connection.attention_required", revoked(1));
  await eventually("the event arrives", () => receiver.received.length === 1);
  assert.ok(signatureValid(hook.secret, receiver.received[0]));
  assert.equal(JSON.parse(receiver.received[0].body).type, "connection.attention_required");
});
