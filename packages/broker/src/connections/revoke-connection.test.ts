import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { needsServer } from "@atrium/kit/testing";
import { startBrokerOnTestPostgres, testBrokerEnv } from "../testing/test-broker.js";
import { decodeKey, keyId } from "../vault/key-material.js";
import { createVault } from "../vault/vault.js";
import { sealCredential } from "./connection-record.js";

test("revocation: a hanging provider cannot keep the credential alive; agent sessions close", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const hanging: IncomingMessage[] = [];
  // Accepts revocation requests and never answers them.
  const upstream = createServer((req) => {
    hanging.push(req);
  });
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
  const base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  const env = testBrokerEnv({ REVOCATION_TIMEOUT_MS: "300" });
  const { broker, pg } = await startBrokerOnTestPostgres(t, env);
  t.after(async () => {
    upstream.closeAllConnections();
    await new Promise((r) => upstream.close(r));
  });
  const provider = await broker.call("POST", "/providers", {
    name: "slow-revoker",
    auth_type: "oauth2",
    client_id: "c",
    client_secret: "s",
    auth_url: `${base}/authorize`,
    token_url: `${base}/token`,
    params: { revocation_endpoint: `${base}/revoke` },
  });
  const key = decodeKey(env.ENCRYPTION_KEY) as Buffer;
  const vault = createVault({ keys: new Map([[keyId(key), key]]), currentKeyId: keyId(key) });
  const id = randomUUID();
  await pg.sql.query(
    `INSERT INTO broker_connections (id, workspace_id, provider_id, auth_type, status, credential_enc, expires_at)
     VALUES ($1, 'ws', $2, 'oauth2', 'active', $3, now() + interval '1 hour')`,
    [id, provider.body.id, sealCredential(vault, id, { access_token: "a", refresh_token: "r" })],
  );
  const agent = await broker.call("POST", "/agents", { workspace_id: "ws", name: "agent-7" });
  const session = await broker.call("POST", "/agent-sessions", {
    agent_id: agent.body.id,
    connection_id: id,
  });
  assert.equal(session.body.status, "open");

  const revoked = await broker.call("DELETE", `/connections/${id}?reason=offboarding`);
  assert.equal(revoked.status, 200, JSON.stringify(revoked.body));
  assert.equal(revoked.body.token_deleted, true);
  assert.equal(revoked.body.provider_revoked, false);
  assert.match(String(revoked.body.provider_revocation_error), /timed out/);
  assert.equal(hanging.length, 1, "refresh token revocation attempted, then the deadline hit");

  const closed = await broker.call("GET", `/agent-sessions/${session.body.id}`);
  assert.equal(closed.body.status, "closed");
  assert.equal(closed.body.close_reason, "connection_revoked");
  const { rows } = await pg.sql.query<{ credential_enc: string | null }>(
    "SELECT credential_enc FROM broker_connections WHERE id = $1",
    [id],
  );
  assert.equal(rows[0].credential_enc, null);

  const audit = await broker.call("GET", `/audit?event_type=connection.revoked&resource_id=${id}`);
  const data = (audit.body.events as { data: Record<string, unknown> }[])[0].data;
  assert.equal(data.reason, "offboarding");
  assert.equal(data.agent_sessions_closed, 1);
  const future = new Date(Date.now() + 60_000).toISOString();
  assert.equal((await broker.call("GET", `/audit?since=${future}`)).body.total, 0);
  assert.ok(Number((await broker.call("GET", `/audit?until=${future}&limit=1`)).body.total) >= 2);
  assert.equal((await broker.call("GET", "/audit?since=yesterday")).status, 400);
});
