import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { createLogger, createPgliteSql } from "@atrium/kit";
import { sealCredential } from "../connections/connection-record.js";
import { testBrokerEnv } from "../testing/test-broker.js";
import { decodeKey, keyId } from "../vault/key-material.js";
import { createVault } from "../vault/vault.js";
import { startBrokerService } from "./start-broker-service.js";

test("embedded (PGlite) broker: migrations, static capture, refresh, revocation", {
  timeout: 60_000,
}, async (t) => {
  const upstream = createServer((req, res) => {
    req.resume();
    res.setHeader("content-type", "application/json");
    if (req.url === "/token") {
      res.end(
        JSON.stringify({
          access_token: `at-${randomUUID()}`,
          token_type: "Bearer",
          expires_in: 60,
        }),
      );
    } else {
      res.statusCode = req.headers.authorization === "Basic dXNlcjpwdw==" ? 200 : 401;
      res.end("{}");
    }
  });
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
  const base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  const env = testBrokerEnv();
  const sql = await createPgliteSql({ dataDir: mkdtempSync(join(tmpdir(), "broker-pglite-")) });
  const service = await startBrokerService({
    env,
    sql,
    logger: createLogger({ name: "broker", level: "silent" }),
  });
  t.after(async () => {
    await service.stop();
    await sql.close();
    await new Promise((r) => upstream.close(r));
  });
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${service.urls.rest}${path}`, {
      method,
      headers: { "x-api-key": env.API_KEYS, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  const basic = await call("POST", "/providers", {
    name: "basic",
    auth_type: "basic_auth",
    user_info_endpoint: `${base}/me`,
  });
  assert.equal(
    (
      await call("POST", "/connections/static", {
        provider_id: basic.body.id,
        workspace_id: "w",
        username: "user",
        password: "bad",
      })
    ).status,
    422,
  );
  const captured = await call("POST", "/connections/static", {
    provider_id: basic.body.id,
    workspace_id: "w",
    username: "user",
    password: "pw",
  });
  assert.equal(captured.status, 200, JSON.stringify(captured.body));
  assert.equal((await call("GET", `/connections/${captured.body.id}/token`)).body.password, "pw");

  const revoked = await call("DELETE", `/connections/${captured.body.id}?reason=done`);
  assert.equal(revoked.body.token_deleted, true);
  assert.equal(revoked.body.provider_revoked, false);
  assert.match(String(revoked.body.provider_revocation_error), /no upstream revocation/);
  assert.equal((await call("GET", `/connections/${captured.body.id}/token`)).status, 410);

  // The refresh loop's claim statement and the credential write path on PGlite.
  const oauth = await call("POST", "/providers", {
    name: "oauth",
    auth_type: "oauth2",
    client_id: "c",
    client_secret: "s",
    auth_url: `${base}/authorize`,
    token_url: `${base}/token`,
  });
  assert.equal(oauth.status, 200);
  const key = decodeKey(env.ENCRYPTION_KEY) as Buffer;
  const vault = createVault({ keys: new Map([[keyId(key), key]]), currentKeyId: keyId(key) });
  const id = randomUUID();
  await sql.query(
    `INSERT INTO broker_connections (id, workspace_id, provider_id, auth_type, status, credential_enc, expires_at, refresh_due_at)
     VALUES ($1, 'w', $2, 'oauth2', 'active', $3, now() + interval '10 seconds', now() - interval '1 second')`,
    [id, oauth.body.id, sealCredential(vault, id, { access_token: "old", refresh_token: "r" })],
  );
  assert.deepEqual(await service.refreshLoop.runOnce(), { claimed: 1, refreshed: 1, failed: 0 });
  assert.deepEqual(await service.refreshLoop.runOnce(), { claimed: 0, refreshed: 0, failed: 0 });
  const token = await call("GET", `/connections/${id}/token`);
  assert.match(String(token.body.access_token), /^at-/);
});
