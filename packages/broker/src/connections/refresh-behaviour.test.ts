import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { needsServer } from "@atrium/kit/testing";
import { startBrokerOnTestPostgres, testBrokerEnv } from "../testing/test-broker.js";
import { decodeKey, keyId } from "../vault/key-material.js";
import { createVault } from "../vault/vault.js";
import {
  type ConnectionRecord,
  type Credential,
  openCredential,
  sealCredential,
} from "./connection-record.js";

interface SeenRequest {
  contentType: string;
  body: string;
}

test("refresh: JSON token requests, kept refresh token, default lifetime, 5xx backoff, 4xx attention", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const seen: SeenRequest[] = [];
  let answer: { status: number; body: Record<string, unknown> } = { status: 200, body: {} };
  const upstream = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => {
      body += c;
    });
    req.on("end", () => {
      seen.push({ contentType: String(req.headers["content-type"]), body });
      res.statusCode = answer.status;
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
  const base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  const env = testBrokerEnv({ DEFAULT_TOKEN_LIFETIME_SECONDS: "1234" });
  const { broker, pg } = await startBrokerOnTestPostgres(t, env);
  t.after(async () => {
    await new Promise((r) => upstream.close(r));
  });
  const key = decodeKey(env.ENCRYPTION_KEY) as Buffer;
  const vault = createVault({ keys: new Map([[keyId(key), key]]), currentKeyId: keyId(key) });

  const provider = await broker.call("POST", "/providers", {
    name: "json-idp",
    auth_type: "oauth2",
    client_id: "c",
    client_secret: "s",
    auth_url: `${base}/authorize`,
    token_url: `${base}/token`,
    params: { token_request_format: "json" },
  });
  assert.equal(provider.status, 200, JSON.stringify(provider.body));

  async function expiredConnection(credential: Credential): Promise<string> {
    const id = randomUUID();
    await pg.sql.query(
      `INSERT INTO broker_connections (id, workspace_id, provider_id, auth_type, status, credential_enc, expires_at, refresh_due_at)
       VALUES ($1, 'ws', $2, 'oauth2', 'active', $3, now() - interval '1 minute', now() - interval '1 minute')`,
      [id, provider.body.id, sealCredential(vault, id, credential)],
    );
    return id;
  }
  const row = async (id: string) =>
    (await pg.sql.query<ConnectionRecord>("SELECT * FROM broker_connections WHERE id = $1", [id]))
      .rows[0];

  // JSON body, no refresh_token and no expires_in in the answer.
  answer = { status: 200, body: { access_token: "new-access", token_type: "Bearer" } };
  const id = await expiredConnection({
    access_token: "old",
    token_type: "Bearer",
    refresh_token: "keep-me",
  });
  const token = await broker.call("GET", `/connections/${id}/token`);
  assert.equal(token.status, 200, JSON.stringify(token.body));
  assert.equal(token.body.access_token, "new-access");
  assert.match(seen[0].contentType, /^application\/json/);
  assert.equal(JSON.parse(seen[0].body).grant_type, "refresh_token");
  assert.equal(JSON.parse(seen[0].body).refresh_token, "keep-me");
  const refreshed = await row(id);
  assert.equal(openCredential(vault, refreshed).refresh_token, "keep-me");
  const lifetime =
    ((refreshed.expires_at as Date).getTime() - (refreshed.last_refreshed_at as Date).getTime()) /
    1000;
  assert.ok(Math.abs(lifetime - 1234) < 5, `lifetime ${lifetime}`);
  assert.ok(
    refreshed.refresh_due_at,
    "connections without expires_in are still scheduled for refresh",
  );

  // 5xx: retried later, connection degraded but active.
  answer = { status: 503, body: { error: "temporarily_unavailable" } };
  const flaky = await expiredConnection({ access_token: "a", refresh_token: "r" });
  const unavailable = await broker.call("GET", `/connections/${flaky}/token`);
  assert.equal(unavailable.status, 503);
  const degraded = await row(flaky);
  assert.equal(degraded.status, "active");
  assert.equal(degraded.health_status, "degraded");
  assert.equal(degraded.refresh_failures, 1);
  assert.equal(degraded.lease_owner, null);
  assert.ok((degraded.refresh_due_at as Date).getTime() > Date.now() - 1000);

  // 4xx: attention, audit, and the spec's body.
  answer = { status: 400, body: { error: "invalid_grant" } };
  const rejected = await broker.call("POST", `/connections/${flaky}/refresh`, {});
  assert.equal(rejected.status, 409);
  assert.deepEqual(rejected.body, { error: "attention_required" });
  const fatal = await broker.call(
    "GET",
    `/audit?event_type=token.refresh_fatal&resource_id=${flaky}`,
  );
  assert.equal((fatal.body.events as { data: { error: string } }[])[0].data.error, "invalid_grant");

  // Expired without a refresh token: nothing to refresh with, a human must consent again.
  const stuck = await expiredConnection({ access_token: "a" });
  assert.equal((await broker.call("GET", `/connections/${stuck}/token`)).status, 409);

  // failed → connection_not_active.
  await pg.sql.query("UPDATE broker_connections SET status = 'failed' WHERE id = $1", [id]);
  const inactive = await broker.call("GET", `/connections/${id}/token`);
  assert.equal(inactive.status, 400);
  assert.equal(inactive.body.code, "connection_not_active");
});

test("a token is never served expired when another instance's refresh fails", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  // The first token request is held until released, then answered 503; later ones succeed.
  let releaseFirst: () => void = () => {};
  const firstArrived = new Promise<void>((arrived) => {
    releaseFirst = arrived;
  });
  let requests = 0;
  let unblock: () => void = () => {};
  const blocked = new Promise<void>((r) => {
    unblock = r;
  });
  const upstream = createServer(async (req, res) => {
    req.resume();
    const n = ++requests;
    res.setHeader("content-type", "application/json");
    if (n === 1) {
      releaseFirst();
      await blocked;
      res.statusCode = 503;
      res.end(JSON.stringify({ error: "temporarily_unavailable" }));
      return;
    }
    res.end(JSON.stringify({ access_token: `fresh-${n}`, token_type: "Bearer", expires_in: 3600 }));
  });
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
  const base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  const env = testBrokerEnv({ REFRESH_LOOP: "false" });
  const { broker: a, pg, another } = await startBrokerOnTestPostgres(t, env);
  const b = await another(env);
  t.after(async () => {
    await new Promise((r) => upstream.close(r));
  });
  const key = decodeKey(env.ENCRYPTION_KEY) as Buffer;
  const vault = createVault({ keys: new Map([[keyId(key), key]]), currentKeyId: keyId(key) });
  const provider = await a.call("POST", "/providers", {
    name: "flaky-idp",
    auth_type: "oauth2",
    client_id: "c",
    client_secret: "s",
    auth_url: `${base}/authorize`,
    token_url: `${base}/token`,
  });
  assert.equal(provider.status, 200, JSON.stringify(provider.body));
  const id = randomUUID();
  await pg.sql.query(
    `INSERT INTO broker_connections (id, workspace_id, provider_id, auth_type, status, credential_enc, expires_at, refresh_due_at)
     VALUES ($1, 'ws', $2, 'oauth2', 'active', $3, now() - interval '1 minute', now() - interval '1 minute')`,
    [
      id,
      provider.body.id,
      sealCredential(vault, id, { access_token: "expired", refresh_token: "r" }),
    ],
  );

  const onB = b.call("GET", `/connections/${id}/token`);
  await firstArrived;
  const onA = a.call("GET", `/connections/${id}/token`);
  unblock();
  const [fromB, fromA] = await Promise.all([onB, onA]);
  assert.equal(fromB.status, 503);
  assert.equal(fromA.status, 200, JSON.stringify(fromA.body));
  assert.notEqual(fromA.body.access_token, "expired");
});
