import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { retryDelayMs } from "./webhook-retry.js";
import { generateWebhookSecret, signWebhook, webhookSecretKey } from "./webhook-signature.js";

describe("webhook signature", () => {
  it("matches the Standard Webhooks specification's example", () => {
    const key = webhookSecretKey("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw") as Buffer;
    assert.equal(
      signWebhook(key, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, '{"test": 2432232314}'),
      "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
    );
  });

  it("matches the vector the three SDK tests share", () => {
    const key = webhookSecretKey("whsec_BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=") as Buffer;
    const body =
      '{"type":"connection.revoked","timestamp":"2023-11-14T22:13:20.000Z","data":{"connection_id":"c1"}}';
    assert.equal(
      signWebhook(key, "msg_atrium_vector", 1700000000, body),
      "v1,UOc9NW+9Rk+2njgTEut4NgEMKFBlf3kCGxMAWadfxQ4=",
    );
  });

  it("generates whsec_ secrets it accepts, and rejects malformed ones", () => {
    const secret = generateWebhookSecret();
    assert.match(secret, /^whsec_[A-Za-z0-9+/]+=*$/);
    assert.equal(webhookSecretKey(secret)?.length, 32);
    assert.notEqual(generateWebhookSecret(), secret);
    assert.equal(webhookSecretKey("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"), undefined);
    assert.equal(webhookSecretKey("whsec_c2hvcnQ="), undefined, "5 bytes is too short");
    assert.equal(webhookSecretKey("whsec_not base64!"), undefined);
  });
});

describe("webhook retry delay", () => {
  it("grows fourfold per attempt within its jitter band and stops growing at 6 hours", () => {
    assert.equal(retryDelayMs(1, 5_000, 0), 2_500);
    assert.equal(retryDelayMs(1, 5_000, 1), 5_000);
    assert.equal(retryDelayMs(3, 5_000, 1), 80_000);
    assert.equal(retryDelayMs(30, 5_000, 1), 6 * 3600_000);
    assert.equal(retryDelayMs(30, 5_000, 0), 3 * 3600_000);
  });
});
