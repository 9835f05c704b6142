import assert from "node:assert/strict";
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { it } from "node:test";
import { ageTestKeyFile } from "../testing/paths.js";
import { loadAgeIdentities } from "./age-identities.js";

const key = (n: number) => `AGE-SECRET-KEY-1${String(n).repeat(10)}`;

it("collects identities from SOPS_AGE_KEY and SOPS_AGE_KEY_FILE, skipping comments", async () => {
  const identities = await loadAgeIdentities({
    SOPS_AGE_KEY: `# comment\n${key(1)}\n${key(2)}`,
    SOPS_AGE_KEY_FILE: ageTestKeyFile,
  });
  assert.equal(identities.length, 3);
  assert.deepEqual(identities.slice(0, 2), [key(1), key(2)]);
  assert.match(identities[2], /^AGE-SECRET-KEY-1QXRVEJH9/);
});

it("falls back to the sops default keys file under XDG_CONFIG_HOME", async () => {
  const config = await mkdtemp(join(tmpdir(), "atrium-age-"));
  await mkdir(join(config, "sops", "age"), { recursive: true });
  await writeFile(join(config, "sops", "age", "keys.txt"), `${key(3)}\n`);
  assert.deepEqual(await loadAgeIdentities({ XDG_CONFIG_HOME: config }), [key(3)]);
});
