import assert from "node:assert/strict";
import { test } from "node:test";
import type { Sql } from "@atrium/kit";
import type { ReceivedWebhook, WebhookReceiver } from "@atrium/kit/testing";
import { needsServer } from "@atrium/kit/testing";
import type { TestBroker } from "../testing/test-broker.js";
import {
  expectedSignature,
  revoked,
  startWebhookBroker,
  subscribe,
} from "../testing/webhook-fixture.js";
import { enqueueWebhookEvent } from "./webhook-events.js";

/** Deliveries happen only on the test's own worker passes (deliverOne). */
const manualDelivery = { env: { WEBHOOK_DELIVERY: "false" } };

/** Sends one event and answers the request it arrived as. */
async function deliverOne(
  sql: Sql,
  broker: TestBroker,
  receiver: WebhookReceiver,
): Promise<ReceivedWebhook> {
  await enqueueWebhookEvent(sql, "connection.revoked", revoked(1));
  assert.equal((await broker.service.webhookWorker.runOnce()).delivered, 1);
  return receiver.received[receiver.received.length - 1];
}

test("rotation: new secret once, both signatures during the overlap, one after it, audited", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const { receiver, pg, broker } = await startWebhookBroker(t, manualDelivery);
  const hook = await subscribe(broker, receiver.url);

  const rotated = await broker.call("POST", `/webhooks/${hook.id}/rotate-secret`, {});
  assert.equal(rotated.status, 200, JSON.stringify(rotated.body));
  const secret = String(rotated.body.secret);
  assert.match(secret, /^whsec_/);
  assert.notEqual(secret, hook.secret);
  const expires = Date.parse(String(rotated.body.previous_secret_expires_at));
  assert.ok(Math.abs(expires - (Date.now() + 86_400_000)) < 60_000, "default overlap is a day");
  const read = await broker.call("GET", `/webhooks/${hook.id}`);
  assert.equal(read.body.secret ?? "", "", "the new secret is shown once");
  assert.equal(read.body.secret_fingerprint, rotated.body.secret_fingerprint);
  assert.equal(read.body.previous_secret_expires_at, rotated.body.previous_secret_expires_at);

  const during = await deliverOne(pg.sql, broker, receiver);
  assert.deepEqual(during.signature.split(" "), [
    expectedSignature(secret, during),
    expectedSignature(hook.secret, during),
  ]);

  // A second rotation with a one-second overlap: the first secret is gone at once, the second
  // signs until the overlap ends.
  const again = await broker.call("POST", `/webhooks/${hook.id}/rotate-secret`, {
    overlap_seconds: 1,
  });
  assert.equal(again.status, 200, JSON.stringify(again.body));
  const third = String(again.body.secret);
  const overlap = await deliverOne(pg.sql, broker, receiver);
  assert.deepEqual(overlap.signature.split(" "), [
    expectedSignature(third, overlap),
    expectedSignature(secret, overlap),
  ]);
  await new Promise((resolve) => setTimeout(resolve, 1_100));
  const after = await deliverOne(pg.sql, broker, receiver);
  assert.equal(after.signature, expectedSignature(third, after));
  assert.equal(
    (await broker.call("GET", `/webhooks/${hook.id}`)).body.previous_secret_expires_at,
    undefined,
  );

  const revokedAtOnce = await broker.call("POST", `/webhooks/${hook.id}/rotate-secret`, {
    overlap_seconds: 0,
  });
  const fourth = String(revokedAtOnce.body.secret);
  const single = await deliverOne(pg.sql, broker, receiver);
  assert.equal(single.signature, expectedSignature(fourth, single));

  const audit = await broker.call(
    "GET",
    `/audit?event_type=webhook.secret_rotated&resource_id=${hook.id}`,
  );
  const events = audit.body.events as { data: Record<string, unknown> }[];
  assert.deepEqual(events.map((event) => event.data.overlap_seconds).sort(), [0, 1, 86_400]);
  const logged = JSON.stringify(events) + broker.logs.join("");
  for (const s of [hook.secret, secret, third, fourth]) {
    assert.ok(!logged.includes(s.slice(6)), "no secret in the audit log or the logs");
  }
});

test("rotation: bad overlap is a 400 naming it, an unknown id a 404", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const { broker } = await startWebhookBroker(t, manualDelivery);
  const hook = await subscribe(broker, "https://hooks.example/atrium");
  for (const overlap of [-1, 86_401]) {
    const bad = await broker.call("POST", `/webhooks/${hook.id}/rotate-secret`, {
      overlap_seconds: overlap,
    });
    assert.equal(bad.status, 400, JSON.stringify(bad.body));
    assert.match(String(bad.body.message), /^overlap_seconds must be between 0 and 86400/);
  }
  assert.equal((await broker.call("POST", "/webhooks/nope/rotate-secret", {})).status, 404);
  const unchanged = await broker.call("GET", `/webhooks/${hook.id}`);
  assert.equal(unchanged.body.previous_secret_expires_at, undefined);
});

test("rotation: a secret replaced by PATCH ends the overlap of an earlier rotation", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const { receiver, pg, broker } = await startWebhookBroker(t, manualDelivery);
  const hook = await subscribe(broker, receiver.url);
  const rotated = await broker.call("POST", `/webhooks/${hook.id}/rotate-secret`, {});
  assert.ok(rotated.body.previous_secret_expires_at);
  const replacement = `whsec_${Buffer.alloc(32, 7).toString("base64")}`;
  const patched = await broker.call("PATCH", `/webhooks/${hook.id}`, { secret: replacement });
  assert.equal(patched.status, 200, JSON.stringify(patched.body));
  assert.equal(patched.body.previous_secret_expires_at, undefined);
  const hit = await deliverOne(pg.sql, broker, receiver);
  assert.equal(hit.signature, expectedSignature(replacement, hit));
});
