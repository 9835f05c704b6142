import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { ConnectionRecord } from "./connection-record.js";
import { EXPIRY_MARGIN_MS, expiresSoon } from "./connection-store.js";

const expiring = (expiresAt: Date | null) => ({ expires_at: expiresAt }) as ConnectionRecord;

describe("expiresSoon", () => {
  const now = Date.parse("2026-01-01T00:00:00Z");

  test("a token inside the margin counts as expired; one past it does not", () => {
    assert.equal(expiresSoon(expiring(new Date(now - 1)), now), true);
    assert.equal(expiresSoon(expiring(new Date(now + EXPIRY_MARGIN_MS)), now), true);
    assert.equal(expiresSoon(expiring(new Date(now + EXPIRY_MARGIN_MS + 1)), now), false);
  });

  test("a credential without an expiry never expires", () => {
    assert.equal(expiresSoon(expiring(null), now), false);
  });
});
