import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { test } from "node:test";
import { createPgliteSql, type Sql } from "@atrium/kit";
import type { ConnectionRecord } from "../connections/connection-record.js";
import { sealCredential } from "../connections/connection-record.js";
import { startTestBroker, type TestBroker } from "../testing/test-broker.js";
import { startTestOidcProvider } from "../testing/test-oidc-provider.js";
import { decodeKey, keyId } from "../vault/key-material.js";
import { createVault } from "../vault/vault.js";

// PGlite has one connection: a read through the outer Sql while a transaction is open waits for
// that transaction forever. These paths all open transactions; a regression shows as a timeout.
const deadlockTimeout = { timeout: 60_000 };

async function pgliteBroker(t: { after(fn: () => Promise<void>): void }) {
  const sql = await createPgliteSql();
  const broker = await startTestBroker({ sql });
  t.after(async () => {
    await broker.stop();
    await sql.close();
  });
  return { sql, broker };
}

async function row(sql: Sql, id: string): Promise<ConnectionRecord> {
  const { rows } = await sql.query<ConnectionRecord>(
    "SELECT * FROM broker_connections WHERE id = $1",
    [id],
  );
  return rows[0];
}

/** A connection written directly, for providers no flow can reach. */
async function insertConnection(sql: Sql, broker: TestBroker, providerId: string) {
  const key = decodeKey(broker.env.ENCRYPTION_KEY) as Buffer;
  const vault = createVault({ keys: new Map([[keyId(key), key]]), currentKeyId: keyId(key) });
  const id = randomUUID();
  await sql.query(
    `INSERT INTO broker_connections (id, workspace_id, provider_id, auth_type, status, credential_enc, expires_at)
     VALUES ($1, 'ws', $2, 'oauth2', 'active', $3, now() + interval '1 hour')`,
    [id, providerId, sealCredential(vault, id, { access_token: "a", refresh_token: "r" })],
  );
  return id;
}

test(
  "PGlite: OIDC refresh on retrieval, refresh loop, upstream revocation",
  deadlockTimeout,
  async (t) => {
    const { sql, broker } = await pgliteBroker(t);
    const idp = await startTestOidcProvider();
    t.after(() => idp.close());
    const provider = await broker.call("POST", "/providers", {
      name: "idp",
      auth_type: "oauth2",
      client_id: idp.clientId,
      client_secret: idp.clientSecret,
      issuer: idp.issuer,
      scopes: ["openid", "offline_access"],
    });
    assert.equal(provider.status, 200, JSON.stringify(provider.body));
    const started = await broker.call("POST", "/oauth/start", {
      provider_id: provider.body.id,
      workspace_id: "ws",
      return_url: "http://localhost:3000/done",
      redirect_uri: idp.redirectUri,
    });
    const callback = await idp.authorize(String(started.body.authorization_url));
    const done = await broker.call("GET", `/oauth/callback?${callback}`);
    assert.equal(done.status, 200, JSON.stringify(done.body));
    const id = String((done.body.connection as Record<string, unknown>).id);

    await sql.query("UPDATE broker_connections SET expires_at = now() - interval '1 minute'");
    const refreshed = await broker.call("GET", `/connections/${id}/token`);
    assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
    assert.equal((await row(sql, id)).refresh_count, 1);

    await sql.query("UPDATE broker_connections SET refresh_due_at = now() - interval '1 minute'");
    const pass = await broker.service.refreshLoop.runOnce();
    assert.deepEqual(pass, { claimed: 1, refreshed: 1, failed: 0 });
    assert.equal((await row(sql, id)).refresh_count, 2);

    const revoked = await broker.call("DELETE", `/connections/${id}?reason=left`);
    assert.equal(revoked.status, 200, JSON.stringify(revoked.body));
    assert.equal(revoked.body.provider_revoked, true);
    assert.equal(revoked.body.provider_revocation_error, "");
    assert.equal((await row(sql, id)).credential_enc, null);
    const again = await broker.call("DELETE", `/connections/${id}`);
    assert.equal(again.body.revoked_at, revoked.body.revoked_at);
  },
);

test(
  "PGlite: revocation without an upstream endpoint; provider PATCH and DELETE",
  deadlockTimeout,
  async (t) => {
    const { sql, broker } = await pgliteBroker(t);
    const provider = await broker.call("POST", "/providers", {
      name: "plain",
      auth_type: "oauth2",
      client_id: "c",
      client_secret: "s",
      auth_url: "http://127.0.0.1:9/authorize",
      token_url: "http://127.0.0.1:9/token",
    });
    assert.equal(provider.status, 200, JSON.stringify(provider.body));
    const providerId = String(provider.body.id);
    const id = await insertConnection(sql, broker, providerId);

    const patched = await broker.call("PATCH", `/providers/${providerId}`, {
      description: "patched",
      client_secret: "s2",
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.equal(patched.body.description, "patched");
    assert.equal((await broker.call("DELETE", `/providers/${providerId}`)).status, 412);

    const revoked = await broker.call("DELETE", `/connections/${id}?reason=done`);
    assert.equal(revoked.status, 200, JSON.stringify(revoked.body));
    assert.equal(revoked.body.token_deleted, true);
    assert.equal(revoked.body.provider_revoked, false);
    assert.equal(
      revoked.body.provider_revocation_error,
      "provider advertises no revocation endpoint",
    );
    assert.equal((await row(sql, id)).status, "revoked");

    const deleted = await broker.call("DELETE", `/providers/${providerId}`);
    assert.deepEqual(deleted.body, { id: providerId, deleted: true, secret_deleted: false });
    assert.equal((await broker.call("GET", `/providers/${providerId}`)).status, 404);
  },
);
