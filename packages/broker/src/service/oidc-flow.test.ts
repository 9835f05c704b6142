import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { createTestPostgres, needsServer } from "@atrium/kit/testing";
import type { ConnectionRecord } from "../connections/connection-record.js";
import { openCredential } from "../connections/connection-record.js";
import {
  startBrokerOnTestPostgres,
  startTestBroker,
  type TestBroker,
  testBrokerEnv,
} from "../testing/test-broker.js";
import { startTestOidcProvider, type TestOidcProvider } from "../testing/test-oidc-provider.js";
import { decodeKey, keyId } from "../vault/key-material.js";
import { createVault } from "../vault/vault.js";

async function registerProvider(broker: TestBroker, idp: TestOidcProvider, name = "test-idp") {
  const created = await broker.call("POST", "/providers", {
    name,
    auth_type: "oauth2",
    client_id: idp.clientId,
    client_secret: idp.clientSecret,
    issuer: idp.issuer,
    scopes: ["openid", "offline_access"],
  });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  return created.body;
}

async function connect(
  broker: TestBroker,
  idp: TestOidcProvider,
  providerId: string,
  workspace = "ws-1",
) {
  const started = await broker.call("POST", "/oauth/start", {
    provider_id: providerId,
    workspace_id: workspace,
    return_url: "http://localhost:3000/done",
    redirect_uri: idp.redirectUri,
  });
  assert.equal(started.status, 200, JSON.stringify(started.body));
  const authorizationUrl = new URL(String(started.body.authorization_url));
  assert.equal(authorizationUrl.searchParams.get("code_challenge_method"), "S256");
  assert.ok(authorizationUrl.searchParams.get("nonce"));
  const callback = await idp.authorize(authorizationUrl.href);
  assert.ok(callback.get("code"), `no code in ${callback}`);
  const done = await broker.call("GET", `/oauth/callback?${callback}`);
  assert.equal(done.status, 200, JSON.stringify(done.body));
  assert.equal(done.body.return_url, "http://localhost:3000/done");
  return done.body.connection as Record<string, unknown>;
}

function credentialOf(broker: TestBroker, row: ConnectionRecord) {
  const key = decodeKey(broker.env.ENCRYPTION_KEY) as Buffer;
  const vault = createVault({ keys: new Map([[keyId(key), key]]), currentKeyId: keyId(key) });
  return openCredential(vault, row);
}

test("OAuth 2.0 / OIDC against oidc-provider: authorize, refresh, rotation, attention, revocation", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const { broker, pg } = await startBrokerOnTestPostgres(t);
  const idp = await startTestOidcProvider();
  t.after(() => idp.close());
  const row = async (id: string) =>
    (await pg.sql.query<ConnectionRecord>("SELECT * FROM broker_connections WHERE id = $1", [id]))
      .rows[0];
  const expire = (id: string) =>
    pg.sql.query(
      "UPDATE broker_connections SET expires_at = now() - interval '1 minute', refresh_due_at = now() - interval '1 minute' WHERE id = $1",
      [id],
    );
  const discovery = (await (
    await fetch(`${idp.issuer}/.well-known/openid-configuration`)
  ).json()) as Record<string, string>;
  const secrets: string[] = [
    idp.clientSecret,
    broker.env.ENCRYPTION_KEY,
    broker.env.STATE_KEY,
    broker.apiKey,
  ];

  const provider = await registerProvider(broker, idp);
  assert.match(String(provider.client_secret_fingerprint), /^[0-9a-f]{16}$/);
  assert.equal("client_secret" in provider, false);

  // authorize → callback → token
  const connection = await connect(broker, idp, String(provider.id));
  assert.equal(connection.status, "active");
  assert.equal(connection.subject, "user-1");
  const id = String(connection.id);
  const first = await broker.call("GET", `/connections/${id}/token`);
  assert.equal(first.status, 200);
  assert.equal(first.body.health_status, "healthy");
  assert.ok(first.body.access_token);
  const before = credentialOf(broker, await row(id));
  assert.ok(before.refresh_token);
  secrets.push(
    String(first.body.access_token),
    before.refresh_token as string,
    before.id_token as string,
  );

  // expiry → refresh on retrieval, with the provider rotating the refresh token
  await expire(id);
  const refreshed = await broker.call("GET", `/connections/${id}/token`);
  assert.equal(refreshed.status, 200);
  assert.notEqual(refreshed.body.access_token, first.body.access_token);
  const after = credentialOf(broker, await row(id));
  assert.notEqual(after.refresh_token, before.refresh_token);
  assert.equal((await row(id)).refresh_count, 1);
  secrets.push(String(refreshed.body.access_token), after.refresh_token as string);

  // Replaying the rotated-out refresh token makes the provider revoke the grant (reuse detection),
  // so the broker's next refresh gets invalid_grant.
  const replay = await fetch(discovery.token_endpoint, {
    method: "POST",
    headers: {
      authorization: `Basic ${Buffer.from(`${idp.clientId}:${idp.clientSecret}`).toString("base64")}`,
      "content-type": "application/x-www-form-urlencoded",
    },
    body: new URLSearchParams({
      grant_type: "refresh_token",
      refresh_token: before.refresh_token as string,
    }),
  });
  assert.equal(replay.status, 400);
  assert.equal(((await replay.json()) as { error: string }).error, "invalid_grant");
  const forced = await broker.call("POST", `/connections/${id}/refresh`, {});
  assert.equal(forced.status, 409);
  assert.deepEqual(forced.body, { error: "attention_required" });
  assert.deepEqual((await broker.call("GET", `/connections/${id}/token`)).body, {
    error: "attention_required",
  });
  assert.equal((await row(id)).status, "attention");
  const fatal = await broker.call("GET", `/audit?event_type=token.refresh_fatal&resource_id=${id}`);
  assert.equal(fatal.body.total, 1);

  // A second connection, revoked at the provider through RFC 7009.
  const second = await connect(broker, idp, String(provider.id));
  const secondId = String(second.id);
  const token = await broker.call("GET", `/connections/${secondId}/token`);
  secrets.push(String(token.body.access_token));
  const userinfo = () =>
    fetch(discovery.userinfo_endpoint, {
      headers: { authorization: `Bearer ${token.body.access_token}` },
    });
  assert.equal((await userinfo()).status, 200);
  assert.equal(
    (await broker.call("DELETE", `/connections/${secondId}?workspace_id=other`)).status,
    404,
  );
  const revoked = await broker.call(
    "DELETE",
    `/connections/${secondId}?workspace_id=ws-1&reason=user%20left`,
  );
  assert.equal(revoked.status, 200, JSON.stringify(revoked.body));
  assert.equal(revoked.body.token_deleted, true);
  assert.equal(revoked.body.provider_revoked, true);
  assert.equal(revoked.body.provider_revocation_error, "");
  assert.equal((await userinfo()).status, 401);
  const again = await broker.call("DELETE", `/connections/${secondId}`);
  assert.equal(again.body.revoked_at, revoked.body.revoked_at);
  assert.deepEqual((await broker.call("GET", `/connections/${secondId}/token`)).body, {
    code: "connection_revoked",
  });
  assert.equal((await broker.call("GET", `/connections/${secondId}/token`)).status, 410);
  assert.equal((await broker.call("POST", `/connections/${secondId}/refresh`, {})).status, 410);
  assert.equal((await row(secondId)).credential_enc, null);

  const list = await broker.call("GET", "/connections?workspace_id=ws-1");
  const summaries = list.body.connections as Record<string, unknown>[];
  assert.equal(summaries.length, 2);
  assert.equal(summaries.find((c) => c.id === secondId)?.revoked_at, revoked.body.revoked_at);

  const audit = await broker.call("GET", `/audit?event_type=connection.revoked`);
  assert.equal(audit.body.total, 1);
  const event = (audit.body.events as Record<string, Record<string, unknown>>[])[0];
  assert.equal(event.data.reason, "user left");
  assert.equal(event.caller_ip, "127.0.0.1");
  assert.equal((await broker.call("GET", "/audit?limit=501")).status, 400);
  const created = await broker.call("GET", "/audit?event_type=connection.created");
  assert.equal(created.body.total, 2);
  assert.equal((await broker.call("GET", "/audit?event_type=token.retrieved")).body.total, 3);

  const logs = broker.logs.join("");
  assert.ok(logs.length > 0);
  for (const secret of secrets) {
    assert.ok(secret && !logs.includes(secret), "a secret or token reached the logs");
  }
});

test("a refresh that loses the race with a revocation stores nothing", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const { broker, pg } = await startBrokerOnTestPostgres(t);
  const idp = await startTestOidcProvider();
  t.after(() => idp.close());
  const provider = await registerProvider(broker, idp);
  const id = String((await connect(broker, idp, String(provider.id))).id);
  await pg.sql.query(
    "UPDATE broker_connections SET expires_at = now() - interval '1 minute' WHERE id = $1",
    [id],
  );

  const hold = idp.holdRefreshes();
  const retrieval = broker.call("GET", `/connections/${id}/token`);
  await hold.arrived; // the provider has issued new tokens; the broker has not stored them yet
  const revoked = await broker.call("DELETE", `/connections/${id}?reason=race`);
  assert.equal(revoked.status, 200);
  hold.release();
  const result = await retrieval;
  assert.equal(result.status, 410);
  assert.deepEqual(result.body, { code: "connection_revoked" });
  const { rows } = await pg.sql.query<ConnectionRecord>(
    "SELECT * FROM broker_connections WHERE id = $1",
    [id],
  );
  assert.equal(rows[0].status, "revoked");
  assert.equal(rows[0].credential_enc, null);
  assert.equal(rows[0].refresh_count, 0);
});

test("two brokers on one database never refresh the same connection twice", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const pg = await createTestPostgres({ max: 8 });
  const idp = await startTestOidcProvider();
  const env = testBrokerEnv();
  const a = await startTestBroker({ sql: pg.sql, env });
  const b = await startTestBroker({ sql: pg.sql, env });
  t.after(async () => {
    await a.stop();
    await b.stop();
    await idp.close();
    await pg.drop();
  });
  const provider = await registerProvider(a, idp);
  const ids: string[] = [];
  for (let i = 0; i < 8; i++)
    ids.push(String((await connect(a, idp, String(provider.id), `ws-${i}`)).id));
  await pg.sql.query(
    "UPDATE broker_connections SET expires_at = now() - interval '1 minute', refresh_due_at = now() - interval '1 minute'",
  );
  const refreshesBefore = idp.tokenRequests.get("refresh_token") ?? 0;
  // Both loops and on-demand retrievals on both instances, all at once.
  const results = await Promise.all([
    a.service.refreshLoop.runOnce(),
    b.service.refreshLoop.runOnce(),
    ...ids.map((id, i) => (i % 2 ? a : b).call("GET", `/connections/${id}/token`)),
    ...ids.map((id, i) => (i % 2 ? b : a).call("GET", `/connections/${id}/token`)),
  ]);
  for (const r of results.slice(2) as { status: number }[]) assert.equal(r.status, 200);
  assert.equal((idp.tokenRequests.get("refresh_token") ?? 0) - refreshesBefore, ids.length);
  const { rows } = await pg.sql.query<{ refresh_count: number; status: string }>(
    "SELECT refresh_count, status FROM broker_connections",
  );
  for (const r of rows) {
    assert.equal(r.refresh_count, 1);
    assert.equal(r.status, "active");
  }
});

test("an explicit token_url wins over the discovered token endpoint", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const { broker } = await startBrokerOnTestPostgres(t);
  const idp = await startTestOidcProvider();
  t.after(() => idp.close());
  const discovery = (await (
    await fetch(`${idp.issuer}/.well-known/openid-configuration`)
  ).json()) as Record<string, string>;
  let proxied = 0;
  // Forwards to the real token endpoint, counting what passes through.
  const proxy = createServer(async (req, res) => {
    proxied++;
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const upstream = await fetch(discovery.token_endpoint, {
      method: "POST",
      headers: {
        authorization: String(req.headers.authorization),
        "content-type": String(req.headers["content-type"]),
      },
      body: Buffer.concat(chunks),
    });
    res.statusCode = upstream.status;
    res.setHeader("content-type", upstream.headers.get("content-type") ?? "application/json");
    res.end(Buffer.from(await upstream.arrayBuffer()));
  });
  await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
  t.after(() => new Promise((r) => proxy.close(r)));
  const provider = await broker.call("POST", "/providers", {
    name: "proxied-idp",
    auth_type: "oauth2",
    client_id: idp.clientId,
    client_secret: idp.clientSecret,
    issuer: idp.issuer,
    token_url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/token`,
    scopes: ["openid", "offline_access"],
  });
  assert.equal(provider.status, 200, JSON.stringify(provider.body));
  const connection = await connect(broker, idp, String(provider.body.id));
  assert.equal(connection.status, "active");
  assert.equal(proxied, 1);
  const refreshed = await broker.call("POST", `/connections/${connection.id}/refresh`, {});
  assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
  assert.equal(proxied, 2);
});

test("token.storage_failed: a failed write during the callback or a refresh leaves nothing half-written", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const { broker, pg } = await startBrokerOnTestPostgres(t);
  const idp = await startTestOidcProvider();
  t.after(() => idp.close());
  const rows = async () =>
    (await pg.sql.query<ConnectionRecord>("SELECT * FROM broker_connections")).rows;
  const audit = async (eventType: string) =>
    (await broker.call("GET", `/audit?event_type=${eventType}`)).body.events as {
      resource_id: string;
      data: Record<string, unknown>;
    }[];
  const provider = await registerProvider(broker, idp);
  // Constraints the broker knows nothing about stand in for any failing write (disk full, a
  // trigger, a lost connection): the INSERT of the callback and the UPDATE of a refresh fail.
  await pg.sql.query(
    `ALTER TABLE broker_connections
       ADD CONSTRAINT test_refuse_workspace CHECK (workspace_id <> 'ws-doomed') NOT VALID`,
  );

  const started = await broker.call("POST", "/oauth/start", {
    provider_id: provider.id,
    workspace_id: "ws-doomed",
    return_url: "http://localhost:3000/done",
    redirect_uri: idp.redirectUri,
  });
  const callback = await idp.authorize(String(started.body.authorization_url));
  const failed = await broker.call("GET", `/oauth/callback?${callback}`);
  assert.equal(failed.status, 500);
  assert.deepEqual(failed.body, { code: "Internal", message: "credential could not be stored" });
  assert.deepEqual(await rows(), []);
  assert.deepEqual(await audit("connection.created"), []);
  const [storage] = await audit("token.storage_failed");
  assert.deepEqual(storage.data, {
    provider_id: provider.id,
    workspace_id: "ws-doomed",
    stage: "oauth2",
  });

  const id = String((await connect(broker, idp, String(provider.id))).id);
  const [before] = await rows();
  const token = await broker.call("GET", `/connections/${id}/token`);
  await pg.sql.query(
    `ALTER TABLE broker_connections
       ADD CONSTRAINT test_refuse_refresh CHECK (refresh_count = 0) NOT VALID`,
  );
  const refresh = await broker.call("POST", `/connections/${id}/refresh`, {});
  assert.equal(refresh.status, 500);
  const [after] = await rows();
  assert.equal(after.credential_enc, before.credential_enc);
  assert.deepEqual(after.expires_at, before.expires_at);
  assert.equal(after.refresh_count, 0);
  assert.equal(after.last_refreshed_at, null);
  assert.equal(after.status, "active");
  assert.equal(after.lease_owner, null, "the lease is released for the next attempt");
  const refreshFailure = (await audit("token.storage_failed")).find((e) => e.resource_id === id);
  assert.equal(refreshFailure?.data.stage, "refresh");
  const still = await broker.call("GET", `/connections/${id}/token`);
  assert.equal(still.status, 200);
  assert.equal(still.body.access_token, token.body.access_token);
});
