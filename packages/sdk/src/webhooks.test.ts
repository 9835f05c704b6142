import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { verifyWebhook, WebhookVerificationError } from "./webhooks.js";

// The vector the broker, Python and Go tests share.
const secret = "whsec_BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=";
const body =
  '{"type":"connection.revoked","timestamp":"2023-11-14T22:13:20.000Z","data":{"connection_id":"c1"}}';
const signature = "v1,UOc9NW+9Rk+2njgTEut4NgEMKFBlf3kCGxMAWadfxQ4=";
const at = (seconds: number) => () => seconds * 1000;
const headers = (sig = signature, timestamp = "1700000000") => ({
  "webhook-id": "msg_atrium_vector",
  "webhook-timestamp": timestamp,
  "webhook-signature": sig,
});

describe("verifyWebhook", () => {
  it("accepts the shared vector and returns the event", async () => {
    const event = await verifyWebhook(secret, headers(), body, { now: at(1700000000) });
    assert.deepEqual(event, {
      id: "msg_atrium_vector",
      type: "connection.revoked",
      timestamp: "2023-11-14T22:13:20.000Z",
      data: { connection_id: "c1" },
    });
  });

  it("accepts the Standard Webhooks specification's example, from Headers and bytes", async () => {
    const event = verifyWebhook(
      "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
      new Headers({
        "webhook-id": "msg_p5jXN8AQM9LWM0D4loKWxJek",
        "webhook-timestamp": "1614265330",
        "webhook-signature": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
      }),
      new TextEncoder().encode('{"test": 2432232314}'),
      { now: at(1614265330) },
    );
    assert.equal((await event).id, "msg_p5jXN8AQM9LWM0D4loKWxJek");
  });

  it("finds the matching one among several signatures (secret rotation)", async () => {
    const several = `v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA= v1a,xyz ${signature}`;
    await verifyWebhook(secret, headers(several), body, { now: at(1700000000) });
  });

  it("rejects a changed body, another secret, a stale or future timestamp, missing headers", async () => {
    const reject = (promise: Promise<unknown>, message: RegExp) =>
      assert.rejects(
        promise,
        (error) => error instanceof WebhookVerificationError && message.test(error.message),
      );
    const now = { now: at(1700000000) };
    await reject(
      verifyWebhook(secret, headers(), body.replace("c1", "c2"), now),
      /no webhook-signature/,
    );
    await reject(
      verifyWebhook("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", headers(), body, now),
      /no webhook-signature/,
    );
    await reject(verifyWebhook(secret, headers(), body, { now: at(1700000301) }), /tolerance/);
    await reject(verifyWebhook(secret, headers(), body, { now: at(1699999699) }), /tolerance/);
    await verifyWebhook(secret, headers(), body, { now: at(1700000300) });
    await verifyWebhook(secret, headers(), body, { now: at(1700000900), toleranceSeconds: 900 });
    await reject(verifyWebhook(secret, { "webhook-id": "x" }, body, now), /required/);
    await reject(verifyWebhook(secret, headers("v2,abc"), body, now), /no webhook-signature/);
  });
});
