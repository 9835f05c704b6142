import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "..");

/** Interoperability vectors written by tools outside the project (see testdata/sops/README.md). */
export const sopsFixturesDir = join(repoRoot, "packages", "manifest", "testdata", "sops");

export const ageTestKeyFile = join(sopsFixturesDir, "age-test-key.txt");
