import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ConnectionSettings } from "../broker-context.js";
import { tokenSchedule } from "./token-refresher.js";

describe("tokenSchedule", () => {
  const settings = {
    defaultTokenLifetimeSeconds: 3600,
    refreshSkewSeconds: 300,
  } as ConnectionSettings;
  const now = Date.UTC(2026, 0, 1);
  const seconds = (d: Date | null) => (d ? (d.getTime() - now) / 1000 : null);

  it("refreshes a skew before expiry, at most half-way through a short life", () => {
    const long = tokenSchedule({ expires_in: 3600, refresh_token: "r" }, settings, now);
    assert.equal(seconds(long.expiresAt), 3600);
    assert.equal(seconds(long.refreshDueAt), 3300);
    const short = tokenSchedule({ expires_in: 60, refresh_token: "r" }, settings, now);
    assert.equal(seconds(short.refreshDueAt), 30);
  });

  it("uses the default lifetime for a missing or non-positive expires_in", () => {
    for (const expires_in of [undefined, 0, -5]) {
      const schedule = tokenSchedule({ expires_in, refresh_token: "r" }, settings, now);
      assert.equal(seconds(schedule.expiresAt), 3600);
    }
  });

  it("schedules no refresh without a refresh token", () => {
    assert.equal(tokenSchedule({ expires_in: 60 }, settings, now).refreshDueAt, null);
  });
});
