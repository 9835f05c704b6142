import { readFile, stat } from "node:fs/promises";
import {
  AtriumError,
  type Authenticator,
  apiKeyDigest,
  Code,
  matchesApiKey,
  normalizeApiKey,
} from "@atrium/kit";

export interface ApiKeySetOptions {
  /** Keys from the environment (API_KEYS / API_KEY). */
  keys: string[];
  /** Files of one key per line, `#` comments (API_KEY_FILE / API_KEYS_FILE). */
  files: string[];
  /** How often the files' modification times are checked. */
  reloadMs: number;
  onReloadError?: (file: string, error: unknown) => void;
}

export interface ApiKeySet extends Authenticator {
  /** Reads the files now; the broker refuses to start when this fails or finds no key at all. */
  load(): Promise<void>;
  start(): void;
  stop(): void;
  size(): number;
}

export function parseKeyFile(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.replace(/#.*$/, "").trim())
    .filter(Boolean);
}

/**
 * The broker's X-API-Key check: any of several keys, the file-backed ones re-read when a file
 * changes, so keys rotate without a restart. Comparison is by SHA-256 digest in constant time.
 */
export function createApiKeySet(options: ApiKeySetOptions): ApiKeySet {
  let digests: Buffer[] = options.keys.map(apiKeyDigest);
  const seen = new Map<string, number>();
  let timer: NodeJS.Timeout | undefined;

  async function read(force: boolean): Promise<void> {
    const fromFiles: string[] = [];
    let changed = force;
    for (const file of options.files) {
      const info = await stat(file);
      if (seen.get(file) !== info.mtimeMs) changed = true;
      seen.set(file, info.mtimeMs);
      fromFiles.push(...parseKeyFile(await readFile(file, "utf8")));
    }
    if (!changed) return;
    const all = [...options.keys, ...fromFiles];
    if (all.length === 0) throw new Error("no API key configured");
    digests = all.map(apiKeyDigest);
  }

  const unauthenticated = (message: string) => new AtriumError(Code.Unauthenticated, message);

  return {
    async authenticate(request) {
      const presented = normalizeApiKey(request.headers.get("x-api-key"));
      if (!presented) throw unauthenticated("missing X-API-Key");
      if (!matchesApiKey(presented, digests)) throw unauthenticated("invalid X-API-Key");
      return undefined;
    },
    load: () => read(true),
    start() {
      if (options.files.length === 0 || timer) return;
      timer = setInterval(() => {
        read(false).catch((error) => {
          // Keep the last good keys: a half-written file must not lock everyone out.
          for (const file of options.files) options.onReloadError?.(file, error);
        });
      }, options.reloadMs);
      timer.unref();
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
    },
    size: () => digests.length,
  };
}
