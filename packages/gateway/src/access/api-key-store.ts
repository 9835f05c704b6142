import { readFile } from "node:fs/promises";
import { apiKeyDigest, matchesApiKey, normalizeApiKey } from "@atrium/kit";
import { splitList } from "../config/gateway-config.js";

export interface ApiKeyStoreOptions {
  /** Keys from the environment (GATEWAY_API_KEYS); never reloaded. */
  keys: string[];
  /** Files holding keys, one per line or comma-separated, `#` comments; re-read every `reloadMs`. */
  files: string[];
  reloadMs: number;
  /** A file that cannot be re-read keeps its previous keys; the caller logs why. */
  onReloadError?: (file: string, error: unknown) => void;
}

export type KeyVerdict = "ok" | "missing" | "wrong";

export interface ApiKeyStore {
  /** First load; throws when a file cannot be read, so start-up fails loudly. */
  load(): Promise<void>;
  start(): void;
  stop(): void;
  size(): number;
  check(presented: string | null | undefined): KeyVerdict;
}

export function createApiKeyStore(options: ApiKeyStoreOptions): ApiKeyStore {
  const fromEnv = options.keys.map(apiKeyDigest);
  const fromFiles = new Map<string, Buffer[]>();
  let timer: NodeJS.Timeout | undefined;

  // One key per line (or comma-separated); `#` starts a comment, as in the broker's key files.
  const readKeys = async (file: string) =>
    splitList((await readFile(file, "utf8")).replace(/#.*$/gm, "")).map(apiKeyDigest);

  const reload = async () => {
    for (const file of options.files) {
      try {
        fromFiles.set(file, await readKeys(file));
      } catch (error) {
        options.onReloadError?.(file, error);
      }
    }
  };

  const all = () => [...fromEnv, ...[...fromFiles.values()].flat()];

  return {
    async load() {
      for (const file of options.files) fromFiles.set(file, await readKeys(file));
    },
    start() {
      if (options.files.length === 0 || timer) return;
      timer = setInterval(() => void reload(), options.reloadMs);
      timer.unref();
    },
    stop() {
      clearInterval(timer);
      timer = undefined;
    },
    size: () => all().length,
    check(presented) {
      const key = normalizeApiKey(presented);
      if (!key) return "missing";
      return matchesApiKey(key, all()) ? "ok" : "wrong";
    },
  };
}
