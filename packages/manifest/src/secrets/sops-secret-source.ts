import { readFile } from "node:fs/promises";
import { basename } from "node:path";
import { loadAgeIdentities } from "../sops/age-identities.js";
import { type DecryptedSops, decryptSops } from "../sops/sops-decrypt.js";
import { parseSopsFile, sopsFormatOf } from "../sops/sops-tree.js";
import { sameParsedValue } from "./parsed-equality.js";
import { type SecretSource, secretText } from "./secret-source.js";

export interface SopsSecretSourceOptions {
  path: string;
  env: NodeJS.ProcessEnv;
}

/**
 * Top-level keys of a sops file, decrypted once in memory. A value that decrypts to exactly what
 * the file stores was never encrypted, whatever it looks like.
 */
export function createSopsSecretSource(options: SopsSecretSourceOptions): SecretSource {
  let opened: Promise<DecryptedSops> | undefined;
  const open = async () => {
    const text = await readFile(options.path, "utf8").catch((error: NodeJS.ErrnoException) => {
      throw new Error(`cannot read sops file ${options.path}: ${error.code ?? error.message}`);
    });
    try {
      const file = parseSopsFile(text, sopsFormatOf(options.path));
      return await decryptSops(file, await loadAgeIdentities(options.env));
    } catch (error) {
      throw new Error(`sops file ${options.path}: ${(error as Error).message}`);
    }
  };
  return {
    kind: "sops",
    label: `sops file ${basename(options.path)}`,
    async lookup(name) {
      opened ??= open();
      const entry = (await opened).entries.get(name);
      if (!entry || entry.value === null) return undefined;
      return {
        value: secretText(entry.value),
        plaintext: sameParsedValue(entry.value, entry.stored),
      };
    },
  };
}
