import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, it } from "node:test";
import { decodeKey, keyId, secretFingerprint } from "./key-material.js";
import { createVault } from "./vault.js";

describe("vault", () => {
  const oldKey = randomBytes(32);
  const newKey = randomBytes(32);

  it("round-trips with a fresh nonce each time and the key id as prefix", () => {
    const vault = createVault({
      keys: new Map([[keyId(oldKey), oldKey]]),
      currentKeyId: keyId(oldKey),
    });
    const a = vault.seal("tok", "conn-1");
    const b = vault.seal("tok", "conn-1");
    assert.notEqual(a, b);
    assert.ok(a.startsWith(`${keyId(oldKey)}:`));
    assert.equal(vault.open(a, "conn-1"), "tok");
  });

  it("rejects another row's additional data", () => {
    const vault = createVault({ keys: new Map([["k1", oldKey]]), currentKeyId: "k1" });
    assert.throws(() => vault.open(vault.seal("tok", "conn-1"), "conn-2"), /authentication/);
  });

  it("opens values sealed under a previous key after rotation", () => {
    const before = createVault({ keys: new Map([["old", oldKey]]), currentKeyId: "old" });
    const sealed = before.seal("secret", "p1");
    const after = createVault({
      keys: new Map([
        ["old", oldKey],
        ["new", newKey],
      ]),
      currentKeyId: "new",
    });
    assert.equal(after.open(sealed, "p1"), "secret");
    assert.ok(after.seal("x", "p1").startsWith("new:"));
  });

  it("decodes hex and base64 keys of 32 bytes only", () => {
    assert.deepEqual(decodeKey(oldKey.toString("hex")), oldKey);
    assert.deepEqual(decodeKey(oldKey.toString("base64")), oldKey);
    assert.deepEqual(decodeKey(oldKey.toString("base64url")), oldKey);
    assert.equal(decodeKey(randomBytes(16).toString("base64")), undefined);
    assert.equal(decodeKey("not a key"), undefined);
  });

  it("fingerprints secrets as 16 hex characters", () => {
    assert.match(secretFingerprint("s3cret"), /^[0-9a-f]{16}$/);
  });
});
