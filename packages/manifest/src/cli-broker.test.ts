// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${PLACEHOLDER} text is manifest syntax, not a template
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { secretFingerprint } from "./fingerprint.js";
import { type RealBroker, startRealBroker } from "./testing/real-broker.js";
import { runAtriumctl } from "./testing/run-cli.js";
import { writeTempFiles } from "./testing/temp-files.js";
import { VERSION } from "./version.js";

async function providerDir(files: Record<string, string>): Promise<string> {
  const dir = await writeTempFiles(
    Object.fromEntries(Object.entries(files).map(([n, t]) => [`p/${n}`, t])),
  );
  return join(dir, "p");
}

describe("atriumctl against the real broker (PGlite, loopback)", () => {
  let broker: RealBroker;
  before(async () => {
    broker = await startRealBroker();
  });
  after(() => broker.service.stop());
  const env = (extra: Record<string, string> = {}) => broker.cliEnv(extra);

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

    const listed = (await broker.request("GET", "/providers")).providers as Record<
      string,
      unknown
    >[];
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
    const after = (await broker.request("GET", `/providers/${acme.id}`)) as Record<string, unknown>;
    assert.equal(after.client_secret_fingerprint, secretFingerprint("acme-secret-2"));

    const audit = await broker.request("GET", `/audit?resource_id=${acme.id}`);
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
    const acme = (
      (await broker.request("GET", "/providers")).providers as Record<string, unknown>[]
    ).find((p) => p.name === "acme")!;
    assert.equal(acme.description, "");
    assert.deepEqual(acme.params, { ratio: "1.5", token_request_format: "json" });
  });

  it("lists every provider the broker refuses and still applies the rest", async () => {
    await broker.request("POST", "/providers", {
      name: "drifty",
      auth_type: "oauth2",
      client_id: "d",
      client_secret: "d-secret",
      enable_discovery: true,
      well_known_url: "https://drifty.example/.well-known/openid-configuration",
    });
    // Valid on its own; merged with the live well_known_url it breaks the discovery rule.
    const file = await providerDir({
      "drifty.yaml": [
        "name: drifty",
        "auth_type: oauth2",
        "client_id: d",
        "client_secret: ${DRIFTY_SECRET}",
        "enable_discovery: false",
        "auth_url: https://drifty.example/authorize",
        "token_url: https://drifty.example/token",
        "",
      ].join("\n"),
      "fresh.yaml": "name: fresh\nauth_type: api_key\n",
    });
    const result = await runAtriumctl(
      ["apply", "-file", file, "-auto-approve"],
      env({ DRIFTY_SECRET: "d-secret" }),
    );
    assert.equal(result.code, 1, result.stdout);
    assert.match(
      result.stderr,
      /Error: 1 provider failed:\n {2}drifty \(update\): PATCH \/providers\/\S+: 400 invalid_argument: provider is invalid \(well_known_url is only used when enable_discovery is true\)\n/,
    );
    assert.match(result.stdout, /Apply: 1 of 2 changes applied\./);
    const names = ((await broker.request("GET", "/providers")).providers as { name: string }[]).map(
      (p) => p.name,
    );
    assert.ok(names.includes("fresh"));
  });
});
