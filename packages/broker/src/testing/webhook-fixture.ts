import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import type { TestContext } from "node:test";
import {
  type ReceivedWebhook,
  type ReceiverAnswer,
  startWebhookReceiver,
} from "@atrium/kit/testing";
import { startBrokerOnTestPostgres, type TestBroker, testBrokerEnv } from "./test-broker.js";

/**
 * What the webhook tests share: a broker allowed to deliver to a loopback receiver with fast
 * polls and retries, subscriptions made through its API, and the signature a subscriber computes
 * on its own (not with the broker's code, so a signing mistake cannot agree with itself).
 */

export function webhookEnv(overrides: Record<string, string> = {}): Record<string, string> {
  return testBrokerEnv({
    WEBHOOK_ALLOW_HTTP_LOOPBACK: "true",
    WEBHOOK_POLL_INTERVAL_MS: "20",
    WEBHOOK_RETRY_BASE_MS: "50",
    ...overrides,
  });
}

/** A broker (webhookEnv) on a fresh PostgreSQL database and a receiver; gone after `t`. */
export async function startWebhookBroker(
  t: TestContext,
  options: { answer?: ReceiverAnswer; env?: Record<string, string> } = {},
) {
  const brokers = await startBrokerOnTestPostgres(t, webhookEnv(options.env));
  const receiver = await startWebhookReceiver(options.answer);
  t.after(() => receiver.close());
  return { ...brokers, receiver };
}

/** The v1 signature a subscriber holding `secret` computes for a request. */
export function expectedSignature(secret: string, hit: ReceivedWebhook): string {
  const key = Buffer.from(secret.slice("whsec_".length), "base64");
  const mac = createHmac("sha256", key).update(`${hit.id}.${hit.timestamp}.${hit.body}`);
  return `v1,${mac.digest("base64")}`;
}

/** What a subscriber checks: one of the request's signatures is the one its secret gives. */
export function signatureValid(secret: string, hit: ReceivedWebhook): boolean {
  return hit.signature.split(" ").includes(expectedSignature(secret, hit));
}

/** Subscribes `url` to the connection events the tests send; the secret is shown only here. */
export async function subscribe(
  broker: TestBroker,
  url: string,
): Promise<{ id: string; secret: string }> {
  const created = await broker.call("POST", "/webhooks", {
    name: "ops",
    url,
    event_types: ["connection.revoked", "connection.attention_required"],
  });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  return { id: String(created.body.id), secret: String(created.body.secret) };
}

/** The data of a `connection.revoked` event for connection `conn-<n>`. */
export const revoked = (n: number) => ({
  connection_id: `conn-${n}`,
  workspace_id: "ws-1",
  provider_id: "prov-1",
});
