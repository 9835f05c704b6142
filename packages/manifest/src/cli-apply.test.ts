// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${PLACEHOLDER} text is manifest syntax, not a template
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type FakeBroker, startFakeBroker } from "./testing/fake-broker.js";
import { runAtriumctl } from "./testing/run-cli.js";
import { oauthProviderYaml as oauth, writeTempFiles as tempDir } from "./testing/temp-files.js";

describe("atriumctl plan and apply (in-memory broker)", () => {
  let broker: FakeBroker;
  before(async () => {
    broker = await startFakeBroker();
  });
  after(() => broker.close());
  const env = () => ({ ATRIUM_BROKER_URL: broker.url, ATRIUM_BROKER_API_KEY: broker.apiKey });

  it("plans 0/2, refuses apply without a terminal, applies with -auto-approve", async () => {
    const dir = await tempDir({
      "p/github.yaml": oauth("github", "params:\n  timeout: 1.50\n"),
      "p/google.yaml": oauth("google", "description: Google\n"),
    });
    const secrets = { GITHUB_SECRET: "gh-resolved-secret", GOOGLE_SECRET: "go-resolved-secret" };
    const file = join(dir, "p");
    const plan = await runAtriumctl(["plan", "-file", file], { ...env(), ...secrets });
    assert.equal(plan.code, 2, plan.stderr);
    assert.match(plan.stdout, /\+ github .*: create\n(.*\n)*\s+\+ client_secret: \(masked\)\n/);
    assert.match(plan.stdout, /\+ params\.timeout: \(masked\)/);
    assert.match(plan.stdout, /Plan: 2 to add, 0 to change, 0 to delete\./);
    assert.doesNotMatch(plan.stdout + plan.stderr, /resolved-secret/);

    const refused = await runAtriumctl(["apply", "-file", file], { ...env(), ...secrets });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /needs confirmation: run it on a terminal or pass -auto-approve/);
    assert.equal(broker.providers.size, 0);

    const applied = await runAtriumctl(["apply", "-file", file, "-auto-approve"], {
      ...env(),
      ...secrets,
    });
    assert.equal(applied.code, 0, applied.stderr);
    assert.match(applied.stdout, /Apply: 2 of 2 changes applied\./);
    const github = [...broker.providers.values()].find((p) => p.name === "github")!;
    assert.deepEqual(github.params, { timeout: "1.50" });

    const again = await runAtriumctl(["plan", "-file", file], { ...env(), ...secrets });
    assert.equal(again.code, 0, again.stdout + again.stderr);
    assert.match(again.stdout, /No changes\./);
    assert.ok(broker.requests.every((r) => r.userAgent === "atriumctl/0.1.0"));

    const rotated = await runAtriumctl(["plan", "-file", file], {
      ...env(),
      ...secrets,
      GITHUB_SECRET: "new",
    });
    assert.equal(rotated.code, 2);
    assert.match(
      rotated.stdout,
      /~ github .*: update\n\s+~ client_secret: \(masked\) -> \(masked\) \(fingerprint differs\)/,
    );
  });

  it("lists every failed provider and exits non-zero on a partial failure; prunes orphans", async () => {
    const dir = await tempDir({
      "p/aaa.yaml": "name: aaa\nauth_type: api_key\n",
      "p/bbb.yaml": "name: bbb\nauth_type: api_key\n",
      "p/ccc.yaml": "name: ccc\nauth_type: api_key\n",
    });
    broker.failing.add("aaa");
    broker.failing.add("ccc");
    const result = await runAtriumctl(["apply", "--file", join(dir, "p"), "--auto-approve"], env());
    broker.failing.clear();
    assert.equal(result.code, 1);
    assert.match(
      result.stderr,
      /Error: 2 providers failed:\n {2}aaa \(create\): POST \/providers: 500 internal: injected failure for aaa\n {2}ccc \(create\)/,
    );
    assert.match(result.stdout, /Apply: 1 of 3 changes applied\./);

    const plan = await runAtriumctl(["plan", "-file", join(dir, "p")], env());
    assert.match(
      plan.stdout,
      /\? github: not in the manifest \(kept; -prune deletes it\)\n {2}\? google:/,
    );
    const pruned = await runAtriumctl(
      ["apply", "-file", join(dir, "p"), "-prune", "-auto-approve"],
      env(),
    );
    assert.equal(pruned.code, 0, pruned.stderr);
    assert.deepEqual([...broker.providers.values()].map((p) => p.name).sort(), [
      "aaa",
      "bbb",
      "ccc",
    ]);
  });
});
