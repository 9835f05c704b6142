import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createStateCodec, type FlowState, isAllowedReturnUrl } from "./state-token.js";

describe("state token", () => {
  const state: FlowState = {
    kind: "oauth2",
    providerId: "p1",
    workspaceId: "w1",
    returnUrl: "https://app.example.com/done",
    redirectUri: "https://gw.example.com/auth/callback",
    scopes: ["openid"],
    codeVerifier: "verifier-secret",
    expiresAt: Date.now() + 60_000,
  };

  it("round-trips and hides the PKCE verifier", () => {
    const codec = createStateCodec("k".repeat(32));
    const token = codec.encode(state);
    assert.ok(!Buffer.from(token, "base64url").toString("latin1").includes("verifier-secret"));
    assert.deepEqual(codec.decode(token), state);
  });

  it("rejects another key, tampering and expiry", () => {
    const codec = createStateCodec("k".repeat(32));
    const token = codec.encode(state);
    assert.throws(() => createStateCodec("x".repeat(32)).decode(token), /signature/);
    const raw = Buffer.from(token, "base64url");
    raw[20] ^= 1;
    assert.throws(() => codec.decode(raw.toString("base64url")), /signature/);
    assert.throws(() => codec.decode(token, state.expiresAt + 1), /expired/);
  });

  it("allows return URLs only on allowed domains (loopback when none)", () => {
    assert.equal(isAllowedReturnUrl("https://app.example.com/x", ["example.com"]), true);
    assert.equal(isAllowedReturnUrl("https://evil-example.com/x", ["example.com"]), false);
    assert.equal(isAllowedReturnUrl("javascript:alert(1)", ["example.com"]), false);
    assert.equal(isAllowedReturnUrl("http://localhost:3000/x", []), true);
    assert.equal(isAllowedReturnUrl("https://app.example.com/x", []), false);
  });
});
