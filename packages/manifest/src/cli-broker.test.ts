// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${PLACEHOLDER} text is manifest syntax, not a template
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type BrokerService, startBrokerService } from "@atrium/broker";
import { createLogger } from "@atrium/kit";
import { secretFingerprint } from "./fingerprint.js";
import { runAtriumctl } from "./testing/run-cli.js";
import { VERSION } from "./version.js";

interface Broker {
  service: BrokerService;
  url: string;
  apiKey: string;
  get(path: string): Promise<Record<string, unknown>>;
}

async function startBroker(): Promise<Broker> {
  const apiKey = `key-${randomBytes(8).toString("hex")}`;
  const service = await startBrokerService({
    env: {
      ENCRYPTION_KEY: randomBytes(32).toString("base64"),
      STATE_KEY: randomBytes(32).toString("hex"),
      API_KEYS: apiKey,
      BROKER_HOST: "127.0.0.1",
      BROKER_REST_PORT: "0",
      BROKER_GRPC_PORT: "0",
      REFRESH_LOOP: "false",
      ATRIUM_DATA_DIR: await mkdtemp(join(tmpdir(), "atriumctl-broker-")),
    },
    logger: createLogger({ name: "broker", level: "silent" }),
  });
  const url = service.urls.rest;
  return {
    service,
    url,
    apiKey,
    async get(path) {
      const response = await fetch(`${url}${path}`, { headers: { "x-api-key": apiKey } });
      return (await response.json()) as Record<string, unknown>;
    },
  };
}

async function providerDir(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "atriumctl-real-"));
  await mkdir(join(dir, "p"));
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, "p", name), text);
  return join(dir, "p");
}

describe("atriumctl against the real broker (PGlite, loopback)", () => {
  let broker: Broker;
  before(async () => {
    broker = await startBroker();
  });
  after(() => broker.service.stop());
  const env = (extra: Record<string, string> = {}) => ({
    ATRIUM_BROKER_URL: broker.url,
    ATRIUM_BROKER_API_KEY: broker.apiKey,
    ...extra,
  });

  it("applies, reaches no drift, detects a rotated secret by fingerprint, and is audited with its User-Agent", async () => {
    const file = await providerDir({
      "acme.yaml": [
        "name: acme",
        "auth_type: oauth2",
        "client_id: acme-client",
        "client_secret: ${ACME_CLIENT_SECRET}",
        "auth_url: https://acme.example/authorize",
        "token_url: https://acme.example/token",
        "scopes: [read, write]",
        "description: Acme",
        "params:",
        "  ratio: 1.50",
        "  token_request_format: json",
        "",
      ].join("\n"),
      "keys.yaml": "name: keys\nauth_type: api_key\napi_base_url: https://keys.example/v1\n",
    });
    const secret = { ACME_CLIENT_SECRET: "acme-secret-1" };
    const first = await runAtriumctl(["apply", "-file", file, "-auto-approve"], env(secret));
    assert.equal(first.code, 0, first.stdout + first.stderr);
    assert.doesNotMatch(first.stdout + first.stderr, /acme-secret-1/);

    const listed = (await broker.get("/providers")).providers as Record<string, unknown>[];
    const acme = listed.find((p) => p.name === "acme")!;
    assert.equal(acme.client_secret_fingerprint, secretFingerprint("acme-secret-1"));
    assert.deepEqual(acme.params, { ratio: "1.50", token_request_format: "json" });

    const clean = await runAtriumctl(["plan", "-file", file], env(secret));
    assert.equal(clean.code, 0, clean.stdout + clean.stderr);

    const rotated = await runAtriumctl(
      ["plan", "-file", file],
      env({ ACME_CLIENT_SECRET: "acme-secret-2" }),
    );
    assert.equal(rotated.code, 2, rotated.stderr);
    assert.match(
      rotated.stdout,
      /~ client_secret: \(masked\) -> \(masked\) \(fingerprint differs\)/,
    );
    const applied = await runAtriumctl(
      ["apply", "-file", file, "-auto-approve"],
      env({ ACME_CLIENT_SECRET: "acme-secret-2" }),
    );
    assert.equal(applied.code, 0, applied.stderr);
    const after = (await broker.get(`/providers/${acme.id}`)) as Record<string, unknown>;
    assert.equal(after.client_secret_fingerprint, secretFingerprint("acme-secret-2"));

    const audit = await broker.get(`/audit?resource_id=${acme.id}`);
    const events = audit.events as { event_type: string; user_agent: string }[];
    assert.deepEqual(
      events.map((e) => e.event_type),
      ["provider.updated", "provider.created"],
    );
    assert.ok(events.every((e) => e.user_agent === `atriumctl/${VERSION}`));
  });

  it("changes only what differs: numbers by exact text, explicit empty description clears it", async () => {
    const file = await providerDir({
      "acme.yaml": [
        "name: acme",
        "auth_type: oauth2",
        "client_id: acme-client",
        "client_secret: ${ACME_CLIENT_SECRET}",
        "auth_url: https://acme.example/authorize",
        "token_url: https://acme.example/token",
        "scopes: [read, write]",
        'description: ""',
        "params:",
        "  ratio: 1.5",
        "  token_request_format: json",
        "",
      ].join("\n"),
      "keys.yaml": "name: keys\nauth_type: api_key\napi_base_url: https://keys.example/v1\n",
    });
    const secret = { ACME_CLIENT_SECRET: "acme-secret-2" };
    const plan = await runAtriumctl(["plan", "-file", file], env(secret));
    assert.equal(plan.code, 2, plan.stderr);
    assert.match(
      plan.stdout,
      /~ acme \(.*\): update\n {6}~ description: "Acme" -> ""\n {6}~ params\.ratio: \(masked\) -> \(masked\)\n\n/,
    );
    const applied = await runAtriumctl(["apply", "-file", file, "-auto-approve"], env(secret));
    assert.equal(applied.code, 0, applied.stderr);
    const acme = ((await broker.get("/providers")).providers as Record<string, unknown>[]).find(
      (p) => p.name === "acme",
    )!;
    assert.equal(acme.description, "");
    assert.deepEqual(acme.params, { ratio: "1.5", token_request_format: "json" });
  });

  it("plans and applies a 200-provider directory, then prunes the rest", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 200; i++) {
      const name = `svc-${String(i).padStart(3, "0")}`;
      files[`${name}.yaml`] =
        `name: ${name}\nauth_type: api_key\ncategory: bulk\ndescription: service ${i}\n`;
    }
    const file = await providerDir(files);
    const plan = await runAtriumctl(["plan", "-file", file, "-prune"], env());
    assert.equal(plan.code, 2, plan.stderr);
    assert.match(plan.stdout, /Plan: 200 to add, 0 to change, 2 to delete\./);
    assert.match(plan.stdout, / {2}- acme: delete .*\n {2}- keys: delete/);
    const applied = await runAtriumctl(["apply", "-file", file, "-prune", "-auto-approve"], env());
    assert.equal(applied.code, 0, applied.stderr);
    assert.match(applied.stdout, /Apply: 202 of 202 changes applied\./);
    const listed = (await broker.get("/providers")).providers as unknown[];
    assert.equal(listed.length, 200);
    const again = await runAtriumctl(["plan", "-file", file], env());
    assert.equal(again.code, 0, again.stdout);
  });

  it("fails with exit 1 when the broker refuses the API key", async () => {
    const file = await providerDir({ "svc-000.yaml": "name: svc-000\nauth_type: api_key\n" });
    const wrongKey = await runAtriumctl(["plan", "-file", file], {
      ATRIUM_BROKER_URL: broker.url,
      ATRIUM_BROKER_API_KEY: "wrong",
    });
    assert.equal(wrongKey.code, 1);
    assert.match(wrongKey.stderr, /GET \/providers: 40[13]/);
  });
});
