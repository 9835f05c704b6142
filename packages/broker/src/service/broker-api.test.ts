import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { eventually, needsServer } from "@atrium/kit/testing";
import { startBrokerOnTestPostgres, testBrokerEnv } from "../testing/test-broker.js";

test("providers: validation, CRUD, fingerprints, PATCH by exact text, redacted audit", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const { broker } = await startBrokerOnTestPostgres(t);

  const invalid = await broker.call("POST", "/providers", {
    name: "Bad Name",
    auth_type: "oauth2",
  });
  assert.equal(invalid.status, 400);
  const findings = (invalid.body.findings as { field: string }[]).map((f) => f.field).sort();
  assert.deepEqual(findings, ["auth_url", "client_id", "client_secret", "name", "token_url"]);
  const malformed = await broker.call("POST", "/providers", '{"name": "x",');
  assert.equal(malformed.status, 400);
  assert.match(String(malformed.body.message), /invalid JSON/);
  assert.equal(
    (await broker.call("POST", "/providers", { name: "x", auth_type: "kerberos" })).status,
    400,
  );

  const input = {
    name: "acme",
    auth_type: "oauth2",
    client_id: "acme-client",
    client_secret: "acme-secret-1",
    auth_url: "https://acme.example/authorize",
    token_url: "https://acme.example/token",
    description: "Acme",
  };
  const created = await broker.call("POST", "/providers", input);
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const id = String(created.body.id);
  const fingerprint = created.body.client_secret_fingerprint;
  assert.match(String(fingerprint), /^[0-9a-f]{16}$/);
  assert.deepEqual(created.body.scopes, []);
  assert.equal((await broker.call("POST", "/providers", input)).status, 409);

  const raw =
    '{"description":"","params":{"ratio":1.50,"token_request_format":"json"},"client_secret":"acme-secret-2"}';
  const patched = await broker.call("PATCH", `/providers/${id}`, raw);
  assert.equal(patched.status, 200, JSON.stringify(patched.body));
  assert.deepEqual(patched.body.params, { ratio: "1.50", token_request_format: "json" });
  assert.equal(patched.body.description, "");
  assert.equal(patched.body.client_id, "acme-client");
  assert.notEqual(patched.body.client_secret_fingerprint, fingerprint);
  assert.equal("client_secret" in patched.body, false);

  const fetched = await broker.call("GET", `/providers/${id}`);
  assert.deepEqual(fetched.body, patched.body);

  const replaced = await broker.call("PUT", `/providers/${id}`, {
    ...input,
    scopes: ["read"],
    client_secret: undefined,
  });
  assert.equal(replaced.status, 200, JSON.stringify(replaced.body));
  assert.deepEqual(replaced.body.params, {});
  assert.equal(replaced.body.client_secret_fingerprint, patched.body.client_secret_fingerprint);

  const updates = await broker.call("GET", `/audit?event_type=provider.updated&resource_id=${id}`);
  assert.equal(updates.body.total, 2);
  const patchEvent = (
    updates.body.events as { data: Record<string, Record<string, unknown>> }[]
  ).find((e) => e.data.method === ("PATCH" as unknown));
  assert.deepEqual(patchEvent?.data.changes, {
    description: "",
    params: { ratio: "***", token_request_format: "***" },
    client_secret: "[REDACTED]",
  });
  assert.ok(!JSON.stringify(updates.body).includes("acme-secret"));

  assert.equal((await broker.call("DELETE", `/providers/${id}`)).status, 200);
  assert.equal((await broker.call("GET", `/providers/${id}`)).status, 404);
  const events = await broker.call("GET", `/audit?resource_id=${id}`);
  assert.deepEqual(
    (events.body.events as { event_type: string }[]).map((e) => e.event_type),
    ["provider.deleted", "provider.updated", "provider.updated", "provider.created"],
  );
});

test("static credentials are validated at the provider before anything is stored", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const upstream = createServer((req, res) => {
    res.statusCode = req.headers.authorization === "Bearer good-key" ? 200 : 401;
    res.end("{}");
  });
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
  const base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  const { broker, pg } = await startBrokerOnTestPostgres(t);
  t.after(async () => {
    await new Promise((r) => upstream.close(r));
  });

  // Validated the way the SDKs will inject it (credential_header, credential_header_prefix).
  const validatable = await broker.call("POST", "/providers", {
    name: "keyed",
    auth_type: "api_key",
    api_base_url: base,
    params: { credential_header: "Authorization", credential_header_prefix: "Bearer " },
  });
  const blind = await broker.call("POST", "/providers", { name: "blind", auth_type: "api_key" });
  const capture = (provider: Record<string, unknown>, key: string) =>
    broker.call("POST", "/connections/static", {
      provider_id: provider.id,
      workspace_id: "ws",
      api_key: key,
    });

  const notValidatable = await capture(blind.body, "good-key");
  assert.equal(notValidatable.status, 422);
  assert.equal(notValidatable.body.code, "provider_not_validatable");
  const rejected = await capture(validatable.body, "bad-key");
  assert.equal(rejected.status, 422);
  assert.equal(rejected.body.code, "invalid_credentials");
  assert.equal((await pg.sql.query("SELECT 1 FROM broker_connections")).rowCount, 0);

  const accepted = await capture(validatable.body, "good-key");
  assert.equal(accepted.status, 200, JSON.stringify(accepted.body));
  const token = await broker.call("GET", `/connections/${accepted.body.id}/token`);
  assert.equal(token.body.api_key, "good-key");
  assert.equal(token.body.health_status, "healthy");

  // Concurrent reads share audit INSERTs, yet each is answered only with its own row committed.
  const tokenPath = `/connections/${accepted.body.id}/token`;
  const reads = await Promise.all(Array.from({ length: 30 }, () => broker.call("GET", tokenPath)));
  assert.deepEqual(
    reads.map((read) => read.body.api_key),
    reads.map(() => "good-key"),
  );
  const audited = await pg.sql.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM audit_events WHERE event_type = 'token.retrieved' AND resource_id = $1",
    [accepted.body.id],
  );
  assert.equal(audited.rows[0].n, 31);
  // An unaudited read is not served.
  await pg.sql.query(
    "ALTER TABLE audit_events ADD CONSTRAINT no_reads CHECK (event_type <> 'token.retrieved') NOT VALID",
  );
  const unaudited = await Promise.all([
    broker.call("GET", tokenPath),
    broker.call("GET", tokenPath),
  ]);
  for (const read of unaudited) {
    assert.equal(read.status, 500);
    assert.equal(read.body.api_key, undefined);
  }
  await pg.sql.query("ALTER TABLE audit_events DROP CONSTRAINT no_reads");

  const schema = await broker.call("GET", `/providers/${validatable.body.id}/capture-schema`);
  assert.deepEqual(schema.body.fields, [{ name: "api_key", secret: true, required: true }]);
});

test("API keys from env and a rotating file, caller IP allowlist", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const dir = mkdtempSync(join(tmpdir(), "broker-keys-"));
  const file = join(dir, "keys");
  writeFileSync(file, "# rotated keys\nfile-key-1\n");
  const { broker, another } = await startBrokerOnTestPostgres(
    t,
    testBrokerEnv({ API_KEYS_FILE: file, API_KEY_RELOAD_INTERVAL_MS: "100" }),
  );
  const fenced = await another(testBrokerEnv({ ALLOWED_CIDRS: "10.0.0.0/8" }));
  const get = (key?: string) =>
    fetch(`${broker.url}/providers`, { headers: key ? { "x-api-key": key } : {} }).then(
      (r) => r.status,
    );

  assert.equal(await get(), 401);
  assert.equal(await get("wrong"), 401);
  assert.equal(await get(broker.apiKey), 200);
  assert.equal(await get("file-key-1"), 200);
  writeFileSync(file, "file-key-2\n");
  await eventually(
    "the rotated key file is re-read",
    async () => (await get("file-key-2")) === 200,
  );
  assert.equal(await get("file-key-1"), 401);
  assert.equal((await fetch(`${broker.url}/health`)).status, 200);

  assert.equal((await fenced.call("GET", "/providers")).status, 403);
});

test("caller_ip comes from X-Forwarded-For only through a trusted proxy", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const { broker: behindProxy, another } = await startBrokerOnTestPostgres(
    t,
    testBrokerEnv({ TRUSTED_PROXIES: "127.0.0.1/32" }),
  );
  const direct = await another();
  const xff = { "x-forwarded-for": "198.51.100.1, 203.0.113.7", "x-atrium-client-ip": "6.6.6.6" };
  await behindProxy.call("POST", "/providers", { name: "via-proxy", auth_type: "api_key" }, xff);
  await direct.call("POST", "/providers", { name: "direct", auth_type: "api_key" }, xff);
  const events = (await direct.call("GET", "/audit?event_type=provider.created")).body.events as {
    caller_ip: string;
    data: { provider_name: string };
  }[];
  const ipOf = (name: string) => events.find((e) => e.data.provider_name === name)?.caller_ip;
  assert.equal(ipOf("via-proxy"), "203.0.113.7");
  assert.equal(ipOf("direct"), "127.0.0.1");
});

test("deep or prototype-keyed params are the caller's 400 naming the field, nothing stored", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const { broker } = await startBrokerOnTestPostgres(t);
  const provider = (params: string) =>
    `{"name":"deep","auth_type":"api_key","api_base_url":"https://deep.example","params":${params}}`;
  const deep = await broker.call(
    "POST",
    "/providers",
    provider(`${'{"a":'.repeat(10_000)}1${"}".repeat(10_000)}`),
  );
  assert.equal(deep.status, 400);
  assert.match(String(deep.body.message), /^params\.a\.a.* is nested more than 64 levels$/);
  const proto = await broker.call("POST", "/providers", provider('{"__proto__":"x"}'));
  assert.equal(proto.status, 400);
  assert.equal(
    proto.body.message,
    'a key of params is "__proto__", which is not accepted as a key',
  );
  const listed = await broker.call("GET", "/providers");
  assert.deepEqual(listed.body.providers, []);
});

test("an oversized static credential is the caller's 400, never the provider's outage", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  let asked = 0;
  const upstream = createServer((req, res) => {
    asked++;
    // As a server with a small header limit answers a long key.
    res.statusCode = (req.headers["x-api-key"]?.length ?? 0) > 1000 ? 431 : 200;
    res.end();
  });
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
  t.after(() => new Promise((r) => upstream.close(r)));
  const { broker, pg } = await startBrokerOnTestPostgres(t);
  const provider = await broker.call("POST", "/providers", {
    name: "small-headers",
    auth_type: "api_key",
    api_base_url: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`,
  });
  const capture = (key: string) =>
    broker.call("POST", "/connections/static", {
      provider_id: provider.body.id,
      workspace_id: "ws",
      api_key: key,
    });

  const huge = await capture("k".repeat(100_000));
  assert.equal(huge.status, 400);
  assert.equal(huge.body.message, "api_key is longer than 4096 bytes");
  assert.equal(asked, 0, "the provider is not asked");
  const refused = await capture("k".repeat(3000));
  assert.equal(refused.status, 400);
  assert.match(
    String(refused.body.message),
    /refused the credential as too large \(answered 431\)/,
  );
  assert.equal((await pg.sql.query("SELECT 1 FROM broker_connections")).rowCount, 0);
});

test("a captured key is presented where the SDKs put it: default header, query parameter, signing header", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const seen: { url: string; headers: Record<string, string | string[] | undefined> }[] = [];
  const upstream = createServer((req, res) => {
    seen.push({ url: req.url ?? "", headers: req.headers });
    res.end("{}");
  });
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
  t.after(() => new Promise((r) => upstream.close(r)));
  const base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  const { broker } = await startBrokerOnTestPostgres(t);
  const captureWith = async (name: string, params: Record<string, string>) => {
    const provider = await broker.call("POST", "/providers", {
      name,
      auth_type: "api_key",
      api_base_url: `${base}/me?v=1`,
      params,
    });
    const captured = await broker.call("POST", "/connections/static", {
      provider_id: provider.body.id,
      workspace_id: "ws",
      api_key: "the key",
    });
    assert.equal(captured.status, 200, JSON.stringify(captured.body));
    const request = seen.at(-1);
    assert.ok(request);
    return request;
  };

  const plain = await captureWith("plain", {});
  assert.equal(plain.url, "/me?v=1");
  assert.equal(plain.headers["x-api-key"], "the key");
  assert.equal(plain.headers.accept, "application/json");
  const query = await captureWith("query", {
    credential_strategy: "query_param",
    credential_query_param: "token",
  });
  assert.equal(query.url, "/me?v=1&token=the+key");
  assert.equal(query.headers["x-api-key"], undefined);
  const defaultQuery = await captureWith("default-query", { credential_strategy: "query_param" });
  assert.equal(defaultQuery.url, "/me?v=1&api_key=the+key");
  // A signing strategy signs requests, not this check: the key itself goes in its header.
  const signing = await captureWith("signing", {
    credential_strategy: "hmac_payload",
    credential_header: "X-Signature",
    credential_header_prefix: "sha256=",
  });
  assert.equal(signing.headers["x-signature"], "sha256=the key");
});

test("/oauth/start refuses a return_url holding control characters, naming it", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const { broker } = await startBrokerOnTestPostgres(t);
  const provider = await broker.call("POST", "/providers", {
    name: "acme",
    auth_type: "oauth2",
    client_id: "acme-client",
    client_secret: "acme-secret",
    auth_url: "https://acme.example/authorize",
    token_url: "https://acme.example/token",
  });
  for (const returnUrl of ["http://127.0.0.1/x\r\nSet-Cookie: a=b", "http://localhost/\t"]) {
    const started = await broker.call("POST", "/oauth/start", {
      provider_id: provider.body.id,
      workspace_id: "ws",
      return_url: returnUrl,
    });
    assert.equal(started.status, 400, JSON.stringify(returnUrl));
    assert.equal(started.body.message, "return_url must not contain control characters");
  }
});
