// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${PLACEHOLDER} text is manifest syntax, not a template
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, it } from "node:test";
import { ageTestKeyFile, repoRoot, sopsFixturesDir } from "./testing/paths.js";
import { runAtriumctl } from "./testing/run-cli.js";
import { oauthProviderYaml as oauth, writeTempFiles as tempDir } from "./testing/temp-files.js";

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
    const fixture = join(sopsFixturesDir, "secret.enc.json");
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
