import assert from "node:assert/strict";
import { createHash, randomUUID } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import type { SqlExecutor } from "@atrium/kit";
import { needsServer } from "@atrium/kit/testing";
import { sealCredential } from "../connections/connection-record.js";
import { connectionStore } from "../connections/connection-store.js";
import {
  startBrokerOnTestPostgres,
  type TestBroker,
  testBrokerEnv,
} from "../testing/test-broker.js";
import { decodeKey, keyId } from "../vault/key-material.js";
import { createVault, type Vault } from "../vault/vault.js";
import { enqueueWebhookEvent } from "./webhook-events.js";

interface OutboxRow {
  webhook_id: string;
  event_type: string;
  body: string;
}

test("webhooks API: 400 naming the field and nothing written; the secret is shown once", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const { broker, pg } = await startBrokerOnTestPostgres(
    t,
    testBrokerEnv({ WEBHOOK_DELIVERY: "false" }),
  );
  const base = { name: "ops", event_types: ["connection.revoked"] };
  for (const [body, field] of [
    [{ ...base, url: "http://hooks.example/atrium" }, "url"],
    [{ ...base, url: "http://127.0.0.1:9/h" }, "url"],
    [{ ...base, url: "not a url" }, "url"],
    [{ name: "ops", event_types: ["connection.revoked"] }, "url"],
    [{ ...base, url: "https://hooks.example/a", event_types: ["token.leaked"] }, "event_types"],
    [{ ...base, url: "https://hooks.example/a", event_types: [] }, "event_types"],
    [{ ...base, url: "https://hooks.example/a", secret: "plain" }, "secret"],
    [{ ...base, name: "", url: "https://hooks.example/a" }, "name"],
  ] as const) {
    const response = await broker.call("POST", "/webhooks", body);
    assert.equal(response.status, 400, JSON.stringify(body));
    assert.match(String(response.body.message), new RegExp(`^${field} `), JSON.stringify(body));
  }
  assert.deepEqual((await broker.call("GET", "/webhooks")).body.webhooks ?? [], []);
  const { rows } = await pg.sql.query("SELECT id FROM broker_webhooks");
  assert.equal(rows.length, 0);

  const created = await broker.call("POST", "/webhooks", {
    ...base,
    url: "https://hooks.example/a",
  });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const secret = String(created.body.secret);
  assert.match(secret, /^whsec_[A-Za-z0-9+/]+=*$/);
  const fingerprint = createHash("sha256").update(secret).digest("hex").slice(0, 16);
  assert.equal(created.body.secret_fingerprint, fingerprint);
  assert.equal(created.body.enabled, true);
  const read = await broker.call("GET", `/webhooks/${created.body.id}`);
  assert.equal(read.body.secret ?? "", "", "never returned after creation");
  assert.equal(read.body.secret_fingerprint, fingerprint);
  const stored = await pg.sql.query<{ secret_enc: string }>(
    "SELECT secret_enc FROM broker_webhooks",
  );
  assert.ok(!stored.rows[0].secret_enc.includes(secret.slice(6)), "encrypted at rest");

  const own = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
  const second = await broker.call("POST", "/webhooks", {
    name: "audit",
    url: "https://hooks.example/b",
    event_types: ["connection.created"],
    secret: own,
  });
  assert.equal(second.body.secret ?? "", "", "a caller's own secret is not echoed");
  assert.equal(
    second.body.secret_fingerprint,
    createHash("sha256").update(own).digest("hex").slice(0, 16),
  );
  const duplicate = await broker.call("POST", "/webhooks", { ...base, url: "https://x.example" });
  assert.equal(duplicate.status, 409);

  const badPatch = await broker.call("PATCH", `/webhooks/${created.body.id}`, { url: "ftp://x" });
  assert.equal(badPatch.status, 400);
  assert.match(String(badPatch.body.message), /^url /);
  const patched = await broker.call("PATCH", `/webhooks/${created.body.id}`, {
    enabled: false,
    event_types: ["connection.failed"],
  });
  assert.equal(patched.status, 200, JSON.stringify(patched.body));
  assert.equal(patched.body.enabled ?? false, false);
  assert.deepEqual(patched.body.event_types, ["connection.failed"]);
  assert.equal(patched.body.url, "https://hooks.example/a", "fields not sent are kept");

  const badStatus = await broker.call("GET", `/webhooks/${created.body.id}/deliveries?status=x`);
  assert.equal(badStatus.status, 400);
  assert.equal((await broker.call("GET", "/webhooks/nope/deliveries")).status, 404);
  assert.equal((await broker.call("DELETE", `/webhooks/${created.body.id}`)).status, 200);
  assert.equal((await broker.call("GET", `/webhooks/${created.body.id}`)).status, 404);
  const audit = await broker.call("GET", "/audit?event_type=webhook.created");
  assert.equal(audit.body.total, 2);
  assert.ok(!JSON.stringify(audit.body).includes(own.slice(6)), "no secret in the audit log");
  assert.ok(!broker.logs.join("").includes(secret.slice(6)), "no secret in the logs");
});

test("webhook events: written with each state change, one row per matching subscription", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  // One upstream: /reject refuses refreshes, /down is unavailable, /me accepts static keys.
  const upstream = createServer((req, res) => {
    req.resume();
    res.setHeader("content-type", "application/json");
    if (req.url === "/reject") {
      res.statusCode = 400;
      res.end(JSON.stringify({ error: "invalid_grant" }));
    } else if (req.url === "/down") {
      res.statusCode = 503;
      res.end("{}");
    } else res.end("{}");
  });
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
  const base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  const env = testBrokerEnv({ WEBHOOK_DELIVERY: "false", MAX_REFRESH_FAILURES: "1" });
  const { broker, pg } = await startBrokerOnTestPostgres(t, env);
  t.after(async () => {
    upstream.closeAllConnections();
    await new Promise((r) => upstream.close(r));
  });
  const subscribe = async (name: string, eventTypes: string[]) => {
    const created = await broker.call("POST", "/webhooks", {
      name,
      url: "https://hooks.example/in",
      event_types: eventTypes,
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    return String(created.body.id);
  };
  const everything = await subscribe("everything", [
    "connection.created",
    "connection.attention_required",
    "connection.revoked",
    "connection.failed",
    "token.refresh_fatal",
  ]);
  const revocations = await subscribe("revocations", ["connection.revoked"]);
  const outbox = async () =>
    (
      await pg.sql.query<OutboxRow>(
        "SELECT webhook_id, event_type, body FROM broker_webhook_deliveries ORDER BY created_at, event_type",
      )
    ).rows;

  const rejecting = await oauthProvider(broker, "rejecting", `${base}/reject`);
  const down = await oauthProvider(broker, "down", `${base}/down`);
  const vault = vaultOf(broker);
  const a = await insertConnection(pg.sql, vault, rejecting);
  const b = await insertConnection(pg.sql, vault, down);
  const c = await insertConnection(pg.sql, vault, rejecting);

  // A state change that rolls back takes its outbox rows with it.
  await assert.rejects(
    pg.sql.transaction(async (tx) => {
      await connectionStore.markAttention(tx, a);
      await enqueueWebhookEvent(tx, "connection.attention_required", {
        connection_id: a,
        workspace_id: "ws-1",
        provider_id: rejecting,
      });
      throw new Error("the change fails after the event was written");
    }),
    /the change fails/,
  );
  assert.deepEqual(await outbox(), []);
  assert.equal((await broker.call("GET", `/connections/${a}`)).body.status, "active");

  assert.equal((await broker.call("POST", `/connections/${a}/refresh`, {})).status, 409);
  assert.equal((await broker.call("POST", `/connections/${b}/refresh`, {})).status, 503);
  assert.equal((await broker.call("GET", `/connections/${b}`)).body.status, "failed");
  assert.equal((await broker.call("DELETE", `/connections/${c}?reason=offboarding`)).status, 200);

  const staticProvider = await broker.call("POST", "/providers", {
    name: "static",
    auth_type: "api_key",
    api_base_url: `${base}/me`,
  });
  const captured = await broker.call("POST", "/connections/static", {
    provider_id: staticProvider.body.id,
    workspace_id: "ws-2",
    api_key: "k-123",
  });
  assert.equal(captured.status, 200, JSON.stringify(captured.body));

  const rows = await outbox();
  const seen = rows.map((row) => {
    const body = JSON.parse(row.body);
    assert.equal(body.type, row.event_type);
    assert.ok(!row.body.includes("k-123"), "no credential in an event");
    return [
      row.webhook_id === everything ? "everything" : "revocations",
      body.type,
      body.data.connection_id,
    ];
  });
  assert.deepEqual(
    seen.sort(),
    [
      ["everything", "connection.attention_required", a],
      ["everything", "connection.created", captured.body.id],
      ["everything", "connection.failed", b],
      ["everything", "connection.revoked", c],
      ["everything", "token.refresh_fatal", a],
      ["revocations", "connection.revoked", c],
    ].sort(),
  );
  const revokedEvent = JSON.parse(
    (rows.find((r) => r.event_type === "connection.revoked") as OutboxRow).body,
  );
  assert.deepEqual(revokedEvent.data, {
    connection_id: c,
    workspace_id: "ws-1",
    provider_id: rejecting,
    reason: "offboarding",
    provider_revoked: false,
  });

  const listed = await broker.call("GET", `/webhooks/${revocations}/deliveries`);
  const deliveries = listed.body.deliveries as Record<string, unknown>[];
  assert.equal(deliveries.length, 1);
  assert.equal(deliveries[0].status, "pending");
  assert.equal(deliveries[0].event_type, "connection.revoked");
  assert.deepEqual(JSON.parse(String(deliveries[0].payload)), revokedEvent);

  // A repeated revocation changes nothing and announces nothing.
  await broker.call("DELETE", `/connections/${c}`);
  assert.equal((await outbox()).length, rows.length);
});

async function oauthProvider(broker: TestBroker, name: string, tokenUrl: string) {
  const provider = await broker.call("POST", "/providers", {
    name,
    auth_type: "oauth2",
    client_id: "c",
    client_secret: "s",
    auth_url: "https://idp.example/authorize",
    token_url: tokenUrl,
  });
  assert.equal(provider.status, 200, JSON.stringify(provider.body));
  return String(provider.body.id);
}

function vaultOf(broker: TestBroker) {
  const key = decodeKey(broker.env.ENCRYPTION_KEY) as Buffer;
  return createVault({ keys: new Map([[keyId(key), key]]), currentKeyId: keyId(key) });
}

/** A live OAuth connection with a refresh token, as a completed flow leaves it. */
async function insertConnection(
  sql: SqlExecutor,
  vault: Vault,
  providerId: string,
): Promise<string> {
  const id = randomUUID();
  await sql.query(
    `INSERT INTO broker_connections (id, workspace_id, provider_id, auth_type, status, credential_enc, expires_at)
     VALUES ($1, 'ws-1', $2, 'oauth2', 'active', $3, now() + interval '1 hour')`,
    [id, providerId, sealCredential(vault, id, { access_token: "a", refresh_token: "r" })],
  );
  return id;
}
