import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "..");

/** Interoperability vectors written by tools outside the project. */
export const fixturesDir = join(repoRoot, "..", "shared", "fixtures");

export const ageTestKeyFile = join(fixturesDir, "sops", "age-test-key.txt");
