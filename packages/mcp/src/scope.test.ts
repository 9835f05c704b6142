import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { test } from "node:test";
import { parseScopeDirectory, scopeTag } from "./scope.js";

/** The scope file's format: the 64 hex digits of the key's SHA-256 (kit's apiKeyDigestHex). */
const keyDigest = (key: string) => createHash("sha256").update(key).digest("hex");

test("a key finds its scope by digest; workspace defaults to the tenant", () => {
  const scopes = parseScopeDirectory(
    JSON.stringify([
      { key_sha256: keyDigest("alice-key").toUpperCase(), tenant_id: "acme", user_id: "alice" },
      {
        key_sha256: keyDigest("bob-key"),
        tenant_id: "acme",
        user_id: "bob",
        agent_id: "cursor",
        workspace_id: "ws-b",
      },
    ]),
  );
  assert.equal(scopes.size(), 2);
  assert.deepEqual(scopes.forKeyDigest(keyDigest("alice-key")), {
    tenantId: "acme",
    userId: "alice",
    agentId: "mcp",
    workspaceId: "acme",
  });
  assert.equal(scopes.forKeyDigest(keyDigest("bob-key").toUpperCase())?.workspaceId, "ws-b");
  assert.equal(scopes.forKeyDigest(keyDigest("carol-key")), undefined);
  assert.equal(scopes.forKeyDigest("alice-key"), undefined, "a key is not its digest");
});

test("a bad scope list names the problem", () => {
  const digest = keyDigest("k");
  assert.throws(() => parseScopeDirectory("{"), /not JSON/);
  assert.throws(
    () =>
      parseScopeDirectory(JSON.stringify([{ key_sha256: "abc", tenant_id: "t", user_id: "u" }])),
    /0\.key_sha256 must be the 64 hex digits/,
  );
  assert.throws(
    () => parseScopeDirectory(JSON.stringify([{ key_sha256: digest, tenant_id: "t" }])),
    /0\.user_id/,
  );
  assert.throws(
    () =>
      parseScopeDirectory(
        JSON.stringify([{ key_sha256: digest, tenant_id: "t", user_id: "u", key: "k" }]),
      ),
    /key/,
  );
  const twice = { key_sha256: digest, tenant_id: "t", user_id: "u" };
  assert.throws(() => parseScopeDirectory(JSON.stringify([twice, twice])), /appears twice/);
});

test("an OAuth subject finds its scope; an entry names a key or a subject, not both", () => {
  const scopes = parseScopeDirectory(
    JSON.stringify([
      { subject: "user-123", tenant_id: "acme", user_id: "carol", workspace_id: "ws-c" },
      { key_sha256: keyDigest("k"), tenant_id: "acme", user_id: "dave" },
    ]),
  );
  assert.equal(scopes.size(), 2);
  assert.equal(scopes.forSubject("user-123")?.userId, "carol");
  assert.equal(scopes.forSubject("user-1234"), undefined);
  assert.equal(scopes.forKeyDigest(keyDigest("user-123")), undefined, "a subject is not a key");
  assert.throws(
    () =>
      parseScopeDirectory(
        JSON.stringify([
          { key_sha256: keyDigest("k"), subject: "s", tenant_id: "t", user_id: "u" },
        ]),
      ),
    /exactly one of key_sha256 .* or subject/,
  );
  assert.throws(
    () => parseScopeDirectory(JSON.stringify([{ tenant_id: "t", user_id: "u" }])),
    /exactly one of key_sha256/,
  );
  const twice = { subject: "s", tenant_id: "t", user_id: "u" };
  assert.throws(
    () => parseScopeDirectory(JSON.stringify([twice, twice])),
    /subject s appears twice/,
  );
});

test("scope tags differ between users and agents", () => {
  const base = { tenantId: "t", userId: "u", agentId: "a", workspaceId: "w" };
  assert.match(scopeTag(base), /^[0-9a-f]{12}$/);
  assert.notEqual(scopeTag(base), scopeTag({ ...base, userId: "v" }));
  assert.notEqual(scopeTag(base), scopeTag({ ...base, agentId: "b" }));
  assert.equal(scopeTag(base), scopeTag({ ...base, workspaceId: "other" }));
});
