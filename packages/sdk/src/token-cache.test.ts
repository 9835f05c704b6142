import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ConnectionToken } from "./gateway-types.js";
import { createTokenCache } from "./token-cache.js";

const token = (expiresAt?: string) =>
  ({ connection_id: "c", expires_at: expiresAt }) as ConnectionToken;

describe("token cache", () => {
  it("keeps an expiring token until the skew before expires_at", () => {
    let now = Date.parse("2030-01-01T00:00:00Z");
    const cache = createTokenCache({ expirySkewMs: 10_000, now: () => now });
    cache.set("c", token("2030-01-01T00:01:00Z"));
    now += 49_999;
    assert.ok(cache.get("c"));
    now += 1;
    assert.equal(cache.get("c"), undefined);
  });

  it("never stores a token already inside the skew", () => {
    const now = Date.parse("2030-01-01T00:00:00Z");
    const cache = createTokenCache({ expirySkewMs: 30_000, now: () => now });
    cache.set("c", token("2030-01-01T00:00:20Z"));
    assert.equal(cache.get("c"), undefined);
  });

  it("reuses a credential without expiry for staticTtlMs only, so revocations are seen", () => {
    let now = 0;
    const cache = createTokenCache({ staticTtlMs: 5_000, now: () => now });
    cache.set("c", token());
    now = 4_999;
    assert.ok(cache.get("c"));
    now = 5_000;
    assert.equal(cache.get("c"), undefined);
  });
});
