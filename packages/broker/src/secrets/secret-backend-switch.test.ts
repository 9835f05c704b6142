import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { needsServer } from "@atrium/kit/testing";
import { sealCredential } from "../connections/connection-record.js";
import { startFakeSecretManager } from "../testing/fake-secret-manager.js";
import { startBrokerOnTestPostgres, testBrokerEnv } from "../testing/test-broker.js";
import { decodeKey, keyId } from "../vault/key-material.js";
import { createVault } from "../vault/vault.js";

test("SECRET_BACKEND=gcp: secrets in Secret Manager, metadata-only reads, rows from before the switch keep working", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const fake = await startFakeSecretManager();
  const basicAuth: string[] = [];
  const upstream = createServer((req, res) => {
    // RFC 6749 2.3.1: id and secret are form-encoded before Basic encoding.
    const pair = Buffer.from(String(req.headers.authorization).slice(6), "base64").toString();
    basicAuth.push(pair.split(":").map(decodeURIComponent).join(":"));
    req.resume();
    res.setHeader("content-type", "application/json");
    res.end(
      JSON.stringify({ access_token: `at-${randomUUID()}`, token_type: "Bearer", expires_in: 600 }),
    );
  });
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
  const base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  const internalEnv = testBrokerEnv();
  const { broker: internal, pg, another } = await startBrokerOnTestPostgres(t, internalEnv);
  t.after(async () => {
    await fake.close();
    await new Promise((r) => upstream.close(r));
  });
  const provider = (name: string, secret: string) => ({
    name,
    auth_type: "oauth2",
    client_id: name,
    client_secret: secret,
    auth_url: `${base}/authorize`,
    token_url: `${base}/token`,
    scopes: ["read"],
    params: { skip_scope_on_auth: "true", token_request_format: "form", prompt: "consent" },
  });
  const old = await internal.call(
    "POST",
    "/providers",
    provider("before-switch", "internal-secret"),
  );
  assert.equal(old.body.secret_backend, "internal");
  await internal.stop();

  const gcp = await another({
    ...internalEnv,
    SECRET_BACKEND: "gcp",
    GCP_PROJECT: "atrium-test",
    SECRET_PREFIX: "brk",
    SECRET_MANAGER_ENDPOINT: `127.0.0.1:${fake.port}`,
  });

  const created = await gcp.call("POST", "/providers", provider("after-switch", "gcp-secret-1"));
  assert.equal(created.status, 200, JSON.stringify(created.body));
  assert.equal(created.body.secret_backend, "gcp");
  const secretName = `projects/atrium-test/secrets/brk-${created.body.id}`;
  assert.deepEqual(fake.secrets.get(secretName)?.map(String), ["gcp-secret-1"]);
  const { rows } = await pg.sql.query<{
    client_secret_enc: string | null;
    client_secret_ref: string;
  }>("SELECT client_secret_enc, client_secret_ref FROM broker_providers WHERE id = $1", [
    created.body.id,
  ]);
  assert.equal(rows[0].client_secret_enc, null);
  assert.equal(rows[0].client_secret_ref, `${secretName}/versions/1`);

  const duplicate = await gcp.call("POST", "/providers", provider("after-switch", "dup-secret"));
  assert.equal(duplicate.status, 409);
  assert.equal(fake.secrets.size, 1, "a rejected create leaves no secret behind");

  const callsBefore = fake.calls.length;
  assert.equal((await gcp.call("GET", `/providers/${created.body.id}`)).status, 200);
  assert.equal((await gcp.call("GET", "/providers")).status, 200);
  assert.equal(fake.calls.length, callsBefore, "provider reads never touch the secret backend");

  const rotated = await gcp.call("PATCH", `/providers/${created.body.id}`, {
    client_secret: "gcp-secret-2",
  });
  assert.notEqual(rotated.body.client_secret_fingerprint, created.body.client_secret_fingerprint);
  assert.deepEqual(fake.secrets.get(secretName)?.map(String), ["gcp-secret-1", "gcp-secret-2"]);

  // skip_scope_on_auth and the broker's own params stay off the authorization URL.
  const started = await gcp.call("POST", "/oauth/start", {
    provider_id: created.body.id,
    workspace_id: "ws",
    return_url: "http://localhost:3000/",
  });
  const url = new URL(String(started.body.authorization_url));
  assert.equal(url.searchParams.has("scope"), false);
  assert.equal(url.searchParams.has("token_request_format"), false);
  assert.equal(url.searchParams.get("prompt"), "consent");

  // Refreshes authenticate with each provider's secret, wherever it lives.
  const key = decodeKey(internalEnv.ENCRYPTION_KEY) as Buffer;
  const vault = createVault({ keys: new Map([[keyId(key), key]]), currentKeyId: keyId(key) });
  for (const providerId of [old.body.id, created.body.id]) {
    const id = randomUUID();
    await pg.sql.query(
      `INSERT INTO broker_connections (id, workspace_id, provider_id, auth_type, status, credential_enc, expires_at)
       VALUES ($1, 'ws', $2, 'oauth2', 'active', $3, now() - interval '1 minute')`,
      [id, providerId, sealCredential(vault, id, { access_token: "a", refresh_token: "r" })],
    );
    assert.equal((await gcp.call("GET", `/connections/${id}/token`)).status, 200);
  }
  assert.deepEqual(basicAuth, ["before-switch:internal-secret", "after-switch:gcp-secret-2"]);

  await pg.sql.query("UPDATE broker_connections SET status = 'revoked', revoked_at = now()");
  const deleted = await gcp.call("DELETE", `/providers/${created.body.id}`);
  assert.deepEqual(deleted.body, { id: created.body.id, deleted: true, secret_deleted: true });
  assert.equal(fake.secrets.has(secretName), false);
});
