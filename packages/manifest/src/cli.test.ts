// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${PLACEHOLDER} text is manifest syntax, not a template
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type FakeBroker, startFakeBroker } from "./testing/fake-broker.js";
import { ageTestKeyFile, fixturesDir, repoRoot } from "./testing/paths.js";
import { runAtriumctl } from "./testing/run-cli.js";

const oauth = (name: string, extra = "") =>
  `name: ${name}\nauth_type: oauth2\nclient_id: ${name}-client\nclient_secret: \${${name.toUpperCase().replaceAll("-", "_")}_SECRET}\nauth_url: https://${name}.example.com/auth\ntoken_url: https://${name}.example.com/token\n${extra}`;

async function tempDir(files: Record<string, string> = {}): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "atriumctl-"));
  for (const [name, text] of Object.entries(files)) {
    await mkdir(join(dir, name, ".."), { recursive: true });
    await writeFile(join(dir, name), text);
  }
  return dir;
}

describe("atriumctl version and usage", () => {
  it("prints the root VERSION", async () => {
    const version = readFileSync(join(repoRoot, "VERSION"), "utf8").trim();
    const result = await runAtriumctl(["version"]);
    assert.equal(result.stdout, `atriumctl ${version}\n`);
    assert.equal(result.code, 0);
  });

  it("rejects unknown flags with usage and exit 1", async () => {
    const result = await runAtriumctl(["plan", "-nope"]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /unknown flag "-nope"/);
  });
});

describe("atriumctl validate (offline)", () => {
  it("reports every finding with file and line, placeholders counting as present", async () => {
    const dir = await tempDir({
      "providers/github.yaml": oauth("github"),
      "providers/okta.yaml":
        "name: okta\nauth_type: saml\nsaml_idp_entity_id: https://okta\nsaml_idp_sso_url: ftp://bad\nsaml_idp_x509_cert: not-a-cert\nsaml_sp_entity_id: atrium\n",
      "providers/ldap.yaml": "name: ldap\nauth_type: kerberos\n",
      "providers/wrong.yaml": "name: other\nauth_type: api_key\n",
    });
    const result = await runAtriumctl(["validate", "-file", join(dir, "providers")]);
    assert.equal(result.code, 1);
    const p = (f: string) => join(dir, "providers", f);
    assert.equal(
      result.stderr,
      [
        "Error: 4 problems in the manifest:",
        `  ${p("wrong.yaml")}:1: file name "wrong.yaml" does not match provider name "other"`,
        `  ${p("ldap.yaml")}:2: provider "ldap": auth_type unsupported auth_type "kerberos"; use one of oauth2, saml, api_key, basic_auth`,
        `  ${p("okta.yaml")}:4: provider "okta": saml_idp_sso_url must be an http(s) URL`,
        `  ${p("okta.yaml")}:5: provider "okta": saml_idp_x509_cert must be an X.509 certificate (PEM or base64 DER)`,
        "",
      ].join("\n"),
    );
  });

  it("accepts --file and -file=, and checks expanded values with -secrets", async () => {
    const dir = await tempDir({
      "m.yaml": `providers:\n  - ${oauth("github").replaceAll("\n", "\n    ")}\n`,
    });
    const ok = await runAtriumctl(["validate", `-file=${join(dir, "m.yaml")}`]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(ok.stdout, "The manifest is valid: 1 provider.\n");
    const unresolved = await runAtriumctl([
      "validate",
      "--file",
      join(dir, "m.yaml"),
      "--secrets",
      "env",
    ]);
    assert.equal(unresolved.code, 1);
    assert.match(
      unresolved.stderr,
      /m\.yaml:5: unresolved placeholder \$\{GITHUB_SECRET\} in client_secret: not found in the environment/,
    );
    const resolved = await runAtriumctl(
      ["validate", "-file", join(dir, "m.yaml"), "-secrets", "env"],
      {
        GITHUB_SECRET: "from-env",
      },
    );
    assert.equal(resolved.code, 0, resolved.stderr);
  });

  it("runs the client_secret policy rule with no source, and refuses env as a source", async () => {
    const dir = await tempDir({
      "m.yaml":
        "providers:\n  - name: a\n    auth_type: oauth2\n    client_id: x\n    client_secret: literal\n    issuer: https://a.example.com\n",
    });
    const file = join(dir, "m.yaml");
    const result = await runAtriumctl(["validate", "-file", file, "-require-encrypted-secrets"]);
    assert.equal(result.code, 1);
    assert.match(
      result.stderr,
      /m\.yaml:5: provider "a": client_secret must be exactly one \$\{PLACEHOLDER\}/,
    );
    const viaEnv = await runAtriumctl(["validate", "-file", file, "-secrets", "env"], {
      ATRIUM_REQUIRE_ENCRYPTED_SECRETS: "true",
    });
    assert.match(viaEnv.stderr, /-secrets env is refused under the encrypted-secrets policy/);
  });

  it("resolves from a sops file written by sops 3.8.1 and refuses a tampered copy", async () => {
    const dir = await tempDir({
      "m.yaml":
        "providers:\n  - name: a\n    auth_type: oauth2\n    client_id: x\n    client_secret: ${secret}\n    issuer: https://a.example.com\n",
    });
    const fixture = join(fixturesDir, "sops", "secret.enc.json");
    const env = { SOPS_AGE_KEY_FILE: ageTestKeyFile };
    const args = ["validate", "-file", join(dir, "m.yaml"), "-require-encrypted-secrets"];
    const ok = await runAtriumctl([...args, "-secrets", `sops:${fixture}`], env);
    assert.equal(ok.code, 0, ok.stderr);
    const doc = JSON.parse(readFileSync(fixture, "utf8"));
    doc.complex.array.reverse();
    const tampered = join(dir, "tampered.enc.json");
    await writeFile(tampered, JSON.stringify(doc));
    const refused = await runAtriumctl([...args, "-secrets", `sops:${tampered}`], env);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /MAC mismatch: the file has been tampered with/);
  });
});

describe("atriumctl plan and apply against a broker", () => {
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

  it("plans and applies a 200-provider directory with a bounded worker pool", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 200; i++) {
      const name = `p${String(i).padStart(3, "0")}`;
      files[`many/${name}.yaml`] =
        `name: ${name}\nauth_type: api_key\ndescription: provider ${i}\n`;
    }
    const dir = await tempDir(files);
    const file = join(dir, "many");
    const plan = await runAtriumctl(["plan", "-file", file, "-prune"], env());
    assert.equal(plan.code, 2, plan.stderr);
    assert.match(plan.stdout, /Plan: 200 to add, 0 to change, 3 to delete\./);
    broker.maxInFlight = 0;
    const applied = await runAtriumctl(
      ["apply", "-file", file, "-prune", "-auto-approve", "-parallelism", "4"],
      env(),
    );
    assert.equal(applied.code, 0, applied.stderr);
    assert.ok(
      broker.maxInFlight <= 4 && broker.maxInFlight > 1,
      `in flight: ${broker.maxInFlight}`,
    );
    assert.equal(broker.providers.size, 200);
    const again = await runAtriumctl(["plan", "-file", file], env());
    assert.equal(again.code, 0, again.stdout);
  });

  it("refuses env secrets for plan under the policy and reports unreachable brokers as errors", async () => {
    const dir = await tempDir({ "p/aaa.yaml": "name: aaa\nauth_type: api_key\n" });
    const policy = await runAtriumctl(
      ["plan", "-file", join(dir, "p"), "-require-encrypted-secrets"],
      env(),
    );
    assert.equal(policy.code, 1);
    assert.match(policy.stderr, /-secrets env is refused/);
    const down = await runAtriumctl(["plan", "-file", join(dir, "p")], {
      ATRIUM_BROKER_URL: "http://127.0.0.1:1",
      ATRIUM_BROKER_API_KEY: "k",
    });
    assert.equal(down.code, 1);
    assert.match(down.stderr, /broker unreachable/);
  });
});
