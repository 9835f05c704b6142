import { readFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";

/**
 * Age identities the way sops finds them: `SOPS_AGE_KEY`, then `SOPS_AGE_KEY_FILE`, then the
 * default keys file under the user's config directory.
 */
export async function loadAgeIdentities(env: NodeJS.ProcessEnv): Promise<string[]> {
  const identities = parseIdentities(env.SOPS_AGE_KEY ?? "");
  if (env.SOPS_AGE_KEY_FILE) {
    identities.push(...parseIdentities(await readFile(env.SOPS_AGE_KEY_FILE, "utf8")));
  }
  if (identities.length === 0) {
    const config = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), ".config");
    const text = await readFile(join(config, "sops", "age", "keys.txt"), "utf8").catch(() => "");
    identities.push(...parseIdentities(text));
  }
  return identities;
}

function parseIdentities(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line.startsWith("AGE-SECRET-KEY-"));
}
