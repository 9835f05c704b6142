// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${PLACEHOLDER} text is manifest syntax, not a template
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { secretFingerprint } from "./fingerprint.js";
import { type RealBroker, startRealBroker } from "./testing/real-broker.js";
import { runAtriumctl } from "./testing/run-cli.js";
import { writeTempFiles } from "./testing/temp-files.js";

const secretOne = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const secretTwo = "whsec_BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=";

async function manifest(text: string): Promise<string> {
  return join(await writeTempFiles({ "m.yaml": text }), "m.yaml");
}

const opsHook = (url: string, events = "[connection.revoked, connection.attention_required]") =>
  [
    "webhooks:",
    "  - name: ops",
    `    url: ${url}`,
    `    event_types: ${events}`,
    "    secret: ${OPS_WEBHOOK_SECRET}",
    "    description: Operations",
    "",
  ].join("\n");

describe("atriumctl webhooks section (real broker, PGlite)", () => {
  let broker: RealBroker;
  before(async () => {
    broker = await startRealBroker();
  });
  after(() => broker.service.stop());
  const env = (secret: string) => broker.cliEnv({ OPS_WEBHOOK_SECRET: secret });
  const live = async () =>
    ((await broker.request("GET", "/webhooks")).webhooks ?? []) as Record<string, unknown>[];

  it("validates offline with the broker's rules, naming the file and line", async () => {
    const good = await manifest(opsHook("https://hooks.example/atrium"));
    const valid = await runAtriumctl(["validate", "-file", good]);
    assert.equal(valid.code, 0, valid.stderr);
    assert.match(valid.stdout, /valid: 0 providers, 1 webhook\./);

    const bad = await manifest(
      [
        "webhooks:",
        "  - name: plain",
        "    url: http://hooks.example/atrium",
        "    event_types: [connection.revoked]",
        "    secret: ${S}",
        "  - name: typo",
        "    url: https://hooks.example/atrium",
        "    event_types: [connection.revokd]",
        "    secret: ${S}",
        "  - name: nosecret",
        "    url: https://hooks.example/atrium",
        "    event_types: [connection.revoked]",
        "    colour: red",
        "",
      ].join("\n"),
    );
    const invalid = await runAtriumctl(["validate", "-file", bad]);
    assert.equal(invalid.code, 1);
    assert.match(invalid.stderr, /m\.yaml:3: webhook "plain": url must use https/);
    assert.match(
      invalid.stderr,
      /m\.yaml:8: webhook "typo": event_types has unknown "connection\.revokd"/,
    );
    assert.match(invalid.stderr, /m\.yaml:13: unknown webhook field "colour"/);
    assert.match(invalid.stderr, /m\.yaml:10: webhook "nosecret": secret is required/);
  });

  it("plans, applies, reaches no drift, rotates the secret by fingerprint, prunes only when asked", async () => {
    const file = await manifest(opsHook("https://hooks.example/atrium"));
    const plan = await runAtriumctl(["plan", "-file", file], env(secretOne));
    assert.equal(plan.code, 2, plan.stderr);
    assert.match(plan.stdout, /\+ webhook ops: create\n(.*\n)*\s+\+ secret: \(masked\)\n/);
    assert.match(plan.stdout, /Plan: 1 to add, 0 to change, 0 to delete\./);
    assert.doesNotMatch(plan.stdout + plan.stderr, /MfKQ9r8G/);

    const applied = await runAtriumctl(["apply", "-file", file, "-auto-approve"], env(secretOne));
    assert.equal(applied.code, 0, applied.stdout + applied.stderr);
    const [ops] = await live();
    assert.equal(ops.name, "ops");
    assert.equal(ops.secret_fingerprint, secretFingerprint(secretOne));
    assert.deepEqual(ops.event_types, ["connection.revoked", "connection.attention_required"]);
    assert.equal(ops.secret ?? "", "");

    // Event types compare as a set: another order is no change.
    const reordered = await manifest(
      opsHook(
        "https://hooks.example/atrium",
        "[connection.attention_required, connection.revoked]",
      ),
    );
    const clean = await runAtriumctl(["plan", "-file", reordered], env(secretOne));
    assert.equal(clean.code, 0, clean.stdout + clean.stderr);
    assert.match(clean.stdout, /No changes\./);

    const moved = await manifest(opsHook("https://hooks2.example/atrium"));
    const drift = await runAtriumctl(["plan", "-file", moved], env(secretTwo));
    assert.equal(drift.code, 2);
    assert.match(
      drift.stdout,
      /~ webhook ops: update\n {6}~ url: "https:\/\/hooks\.example\/atrium" -> "https:\/\/hooks2\.example\/atrium"\n {6}~ secret: \(masked\) -> \(masked\) \(fingerprint differs\)\n/,
    );
    const updated = await runAtriumctl(["apply", "-file", moved, "-auto-approve"], env(secretTwo));
    assert.equal(updated.code, 0, updated.stderr);
    const [after] = await live();
    assert.equal(after.id, ops.id);
    assert.equal(after.url, "https://hooks2.example/atrium");
    assert.equal(after.secret_fingerprint, secretFingerprint(secretTwo));

    const providersOnly = await manifest("providers: []\n");
    const untouched = await runAtriumctl(
      ["apply", "-file", providersOnly, "-prune", "-auto-approve"],
      broker.cliEnv(),
    );
    assert.equal(untouched.code, 0, untouched.stderr);
    assert.equal((await live()).length, 1, "a manifest without webhooks leaves them alone");

    const none = await manifest("webhooks: []\n");
    const orphan = await runAtriumctl(["plan", "-file", none], broker.cliEnv());
    assert.match(orphan.stdout, /\? webhook ops: not in the manifest \(kept; -prune deletes it\)/);
    const pruned = await runAtriumctl(
      ["apply", "-file", none, "-prune", "-auto-approve"],
      broker.cliEnv(),
    );
    assert.equal(pruned.code, 0, pruned.stderr);
    assert.match(pruned.stdout, /- webhook ops: delete/);
    assert.deepEqual(await live(), []);
  });
});
