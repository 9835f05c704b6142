import assert from "node:assert/strict";
import { test } from "node:test";
import { needsServer } from "@atrium/kit/testing";
import { revoked, startWebhookBroker, subscribe } from "../testing/webhook-fixture.js";
import { enqueueWebhookEvent } from "./webhook-events.js";

interface DeliveryView {
  id: string;
  status: string;
  attempt_count?: number;
  next_attempt_at?: string;
  attempts: { attempt: number; status_code?: number }[];
}

test("redelivery: a failed delivery is pending again with a fresh window and the same id", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  let answer = 503;
  const { receiver, pg, broker } = await startWebhookBroker(t, {
    answer: () => answer,
    env: {
      WEBHOOK_DELIVERY: "false",
      WEBHOOK_RETRY_WINDOW_SECONDS: "3600",
      WEBHOOK_RETRY_BASE_MS: "5000",
    },
  });
  const { id } = await subscribe(broker, receiver.url);
  await enqueueWebhookEvent(pg.sql, "connection.revoked", revoked(1));
  // An event older than the window: its first failure exhausts it.
  await pg.sql.query(
    "UPDATE broker_webhook_deliveries SET created_at = now() - interval '2 hours'",
  );
  assert.equal((await broker.service.webhookWorker.runOnce()).failed, 1);
  const list = async () =>
    (await broker.call("GET", `/webhooks/${id}/deliveries`)).body.deliveries as DeliveryView[];
  const [failed] = await list();
  assert.equal(failed.status, "failed");
  // Long after the event: a window counted from created_at would fail it again at once.
  await pg.sql.query("UPDATE broker_webhook_deliveries SET created_at = now() - interval '2 days'");

  const again = await broker.call("POST", `/webhooks/${id}/deliveries/${failed.id}/redeliver`, {});
  assert.equal(again.status, 200, JSON.stringify(again.body));
  assert.equal(again.body.id, failed.id);
  assert.equal(again.body.status, "pending");
  assert.ok(Date.parse(String(again.body.next_attempt_at)) <= Date.now() + 1_000, "due now");

  // Still failing: retried, since its window now runs from the redelivery, not the event.
  const retry = await broker.service.webhookWorker.runOnce();
  assert.deepEqual(
    { claimed: retry.claimed, retrying: retry.retrying },
    { claimed: 1, retrying: 1 },
  );
  answer = 204;
  await pg.sql.query("UPDATE broker_webhook_deliveries SET next_attempt_at = now()");
  assert.equal((await broker.service.webhookWorker.runOnce()).delivered, 1);

  assert.deepEqual(
    receiver.received.map((hit) => hit.id),
    [failed.id, failed.id, failed.id],
    "the webhook-id receivers dedupe on stays the same",
  );
  const [delivered] = await list();
  assert.equal(delivered.status, "delivered");
  assert.deepEqual(
    delivered.attempts.map((a) => [a.attempt, a.status_code]),
    [
      [1, 503],
      [2, 503],
      [3, 204],
    ],
    "the attempt log continues",
  );

  const refused = await broker.call(
    "POST",
    `/webhooks/${id}/deliveries/${failed.id}/redeliver`,
    {},
  );
  assert.equal(refused.status, 412, JSON.stringify(refused.body));
  assert.match(String(refused.body.message), /is delivered; only a failed delivery/);
  const missing = await broker.call("POST", `/webhooks/${id}/deliveries/msg_nope/redeliver`, {});
  assert.equal(missing.status, 404);

  const audit = await broker.call("GET", `/audit?event_type=webhook.redelivered&resource_id=${id}`);
  const events = audit.body.events as { data: Record<string, unknown> }[];
  assert.deepEqual(
    events.map((event) => event.data.delivery_id),
    [failed.id],
  );
});
