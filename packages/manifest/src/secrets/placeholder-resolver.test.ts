// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${PLACEHOLDER} text is manifest syntax, not a template
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { parseManifestFile } from "../manifest-loader.js";
import { formatProblem } from "../manifest-problem.js";
import { ageTestKeyFile, sopsFixturesDir } from "../testing/paths.js";
import { writeSopsFile } from "../testing/sops-writer.js";
import { createEnvSecretSource } from "./env-secret-source.js";
import { resolvePlaceholders } from "./placeholder-resolver.js";
import type { SecretSource } from "./secret-source.js";
import { createSopsSecretSource } from "./sops-secret-source.js";

const manifest = parseManifestFile(
  "m.yaml",
  [
    "providers:",
    "  - name: github",
    "    auth_type: oauth2",
    "    client_id: ${secret}",
    "    client_secret: ${MISSING_ONE}",
    "    description: ${FROM_ENV}",
    "",
  ].join("\n"),
).providers;
const keyEnv = { SOPS_AGE_KEY_FILE: ageTestKeyFile };
const identity = readFileSync(ageTestKeyFile, "utf8")
  .split("\n")
  .find((l) => l.startsWith("AGE-SECRET-KEY-"))!;

describe("placeholder resolution", () => {
  it("resolves from a real sops file and falls back to the environment", async () => {
    const env = { ...keyEnv, FROM_ENV: "from env" };
    const source = createSopsSecretSource({
      path: join(sopsFixturesDir, "secret.enc.yaml"),
      env,
    });
    const { providers, problems } = await resolvePlaceholders(manifest, {
      source,
      env,
      requireEncrypted: false,
    });
    assert.deepEqual(problems.map(formatProblem), [
      "m.yaml:5: unresolved placeholder ${MISSING_ONE} in client_secret: not found in sops file secret.enc.yaml nor the environment",
    ]);
    assert.equal(providers[0].fields.client_id, "this is a secret");
    assert.equal(providers[0].fields.description, "from env");
    assert.deepEqual([...providers[0].maskedFields].sort(), [
      "client_id",
      "client_secret",
      "description",
    ]);
  });

  it("does not fall back to the environment under the encrypted-secrets policy", async () => {
    const env = { ...keyEnv, FROM_ENV: "from env", MISSING_ONE: "x" };
    const source = createSopsSecretSource({
      path: join(sopsFixturesDir, "secret.enc.json"),
      env,
    });
    const { problems } = await resolvePlaceholders(manifest, {
      source,
      env,
      requireEncrypted: true,
    });
    assert.deepEqual(
      problems.map((p) => p.message),
      [
        "unresolved placeholder ${MISSING_ONE} in client_secret: not found in sops file secret.enc.json",
        "unresolved placeholder ${FROM_ENV} in description: not found in sops file secret.enc.json",
      ],
    );
  });

  it("refuses, by key name, a value the sops file stores in plaintext", async () => {
    const dir = await mkdtemp(join(tmpdir(), "atrium-sops-"));
    const path = join(dir, "secrets.enc.json");
    await writeFile(
      path,
      await writeSopsFile({
        format: "json",
        identity,
        values: { GOOD: "s3cret", PLAIN_unencrypted: "visible" },
      }),
    );
    const definitions = parseManifestFile(
      "m.yaml",
      "providers:\n  - name: a\n    client_id: ${PLAIN_unencrypted}\n    client_secret: ${GOOD}\n",
    ).providers;
    const source = createSopsSecretSource({ path, env: keyEnv });
    const strict = await resolvePlaceholders(definitions, {
      source,
      env: keyEnv,
      requireEncrypted: true,
    });
    assert.deepEqual(strict.problems.map(formatProblem), [
      "m.yaml:3: secret PLAIN_unencrypted in sops file secrets.enc.json is stored in plaintext (never encrypted); refused by the encrypted-secrets policy",
    ]);
    const lax = await resolvePlaceholders(definitions, {
      source,
      env: keyEnv,
      requireEncrypted: false,
    });
    assert.deepEqual(lax.problems, []);
    assert.equal(lax.providers[0].fields.client_secret, "s3cret");
  });

  it("names the environment when it is the source", async () => {
    const { problems } = await resolvePlaceholders(manifest, {
      source: createEnvSecretSource({}),
      env: {},
      requireEncrypted: false,
    });
    assert.deepEqual(
      problems.map((p) => p.message),
      [
        "unresolved placeholder ${secret} in client_id: not found in the environment",
        "unresolved placeholder ${MISSING_ONE} in client_secret: not found in the environment",
        "unresolved placeholder ${FROM_ENV} in description: not found in the environment",
      ],
    );
  });

  it("asks the source once per placeholder per provider", async () => {
    const asked: string[] = [];
    const source: SecretSource = {
      kind: "gcpsm",
      label: "stub",
      async lookup(name, provider) {
        asked.push(`${provider}/${name}`);
        return { value: "v", plaintext: false };
      },
    };
    const definitions = parseManifestFile(
      "m.yaml",
      "providers:\n  - name: a\n    client_id: ${X}\n    description: ${X} ${X}\n",
    ).providers;
    await resolvePlaceholders(definitions, { source, env: {}, requireEncrypted: true });
    assert.deepEqual(asked, ["a/X"]);
  });
});

describe("params under the encrypted-secrets policy", () => {
  it("is not policed: its placeholders may come from the environment", async () => {
    const definitions = parseManifestFile(
      "m.yaml",
      "providers:\n  - name: a\n    client_id: ${REGION}\n    params:\n      region: ${REGION}\n",
    ).providers;
    const source: SecretSource = {
      kind: "sops",
      label: "sops file s.enc.yaml",
      lookup: async () => undefined,
    };
    const { providers, problems } = await resolvePlaceholders(definitions, {
      source,
      env: { REGION: "eu" },
      requireEncrypted: true,
    });
    assert.deepEqual(
      problems.map((p) => p.message),
      ["unresolved placeholder ${REGION} in client_id: not found in sops file s.enc.yaml"],
    );
    assert.deepEqual(providers[0].fields.params, { region: "eu" });
  });
});
