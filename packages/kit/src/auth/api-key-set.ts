import { readFile, stat } from "node:fs/promises";
import { splitEnvList } from "../config/env-values.js";
import type { Code } from "../errors.js";
import type { Logger } from "../logger/logger.js";
import { apiKeyDigest, matchesApiKey, normalizeApiKey } from "./api-key.js";
import { type AuthExemptions, createExemption } from "./auth-exemptions.js";
import { AuthenticationError } from "./authentication-error.js";
import type { Authenticator } from "./identity.js";

export interface ApiKeySetOptions {
  /** Keys from the environment; never reloaded. */
  keys: string[];
  /** Files of keys, one per line or comma-separated, `#` starting a comment. */
  files: string[];
  /** How often the files are looked at; a file is re-read when its modification time changed. */
  reloadMs: number;
  /** Told (with the file, never a key) when a file cannot be re-read and keeps its previous keys. */
  logger?: Pick<Logger, "warn">;
}

/** What a presented key is: absent (or blank), one of the set, or not. */
export type KeyVerdict = "ok" | "missing" | "wrong";

export interface ApiKeySet {
  /** First read of the files; throws when one cannot be read, so start-up fails loudly. */
  load(): Promise<void>;
  /** Starts looking at the files every `reloadMs` (no-op without files). */
  start(): void;
  stop(): void;
  size(): number;
  check(presented: string | null | undefined): KeyVerdict;
}

export function parseKeyFile(text: string): string[] {
  return splitEnvList(text.replace(/#.*$/gm, ""));
}

/**
 * The one API-key set of the platform (the broker's and the gateway's inbound keys, the memory
 * service's one key): several keys, file-backed ones rotated without a restart, compared by
 * digest in constant time.
 */
export function createApiKeySet(options: ApiKeySetOptions): ApiKeySet {
  const fromEnv = options.keys.map(apiKeyDigest);
  const fromFiles = new Map<string, { mtimeMs: number; digests: Buffer[] }>();
  let digests: Buffer[] = fromEnv;
  let timer: NodeJS.Timeout | undefined;

  async function read(file: string, force: boolean): Promise<void> {
    const { mtimeMs } = await stat(file);
    if (!force && fromFiles.get(file)?.mtimeMs === mtimeMs) return;
    const keys = parseKeyFile(await readFile(file, "utf8"));
    fromFiles.set(file, { mtimeMs, digests: keys.map(apiKeyDigest) });
  }

  const collect = () => {
    const next = [...fromEnv, ...[...fromFiles.values()].flatMap((f) => f.digests)];
    // A reload that would leave no key at all (a file caught empty mid-write) keeps the last ones.
    if (next.length > 0 || digests.length === 0) digests = next;
  };

  async function reload(): Promise<void> {
    for (const file of options.files) {
      // Keep the last good keys: a half-written or vanished file must not lock everyone out.
      await read(file, false).catch(() =>
        options.logger?.warn(
          { file },
          "API key file could not be re-read; keeping its previous keys",
        ),
      );
    }
    collect();
  }

  return {
    async load() {
      for (const file of options.files) await read(file, true);
      collect();
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
    size: () => digests.length,
    check(presented) {
      const key = normalizeApiKey(presented);
      if (!key) return "missing";
      return matchesApiKey(key, digests) ? "ok" : "wrong";
    },
  };
}

/** How a refusal names what was expected: X-API-Key alone, or a key in either header. */
const refusals = {
  header: { missing: "X-API-Key is required", wrong: "X-API-Key is not valid" },
  headerOrBearer: { missing: "missing API key", wrong: "invalid API key" },
};

/**
 * The answer to a refused key, decided here for every service: a missing key is 401
 * Unauthenticated everywhere; a wrong key is 401 on the broker and the memory service and 403
 * PermissionDenied on the gateway, as their contracts say (`wrongKey`). Undefined when accepted.
 */
export function apiKeyRejection(
  verdict: KeyVerdict,
  wrongKey: Code.Unauthenticated | Code.PermissionDenied,
  acceptsBearer = false,
): AuthenticationError | undefined {
  if (verdict === "ok") return undefined;
  const say = acceptsBearer ? refusals.headerOrBearer : refusals.header;
  return verdict === "missing"
    ? new AuthenticationError("api_key", say.missing)
    : new AuthenticationError("api_key", say.wrong, wrongKey);
}

export interface ApiKeyAuthenticatorOptions {
  keys: ApiKeySet;
  /** A wrong key's answer (a missing one is 401 everywhere); see `apiKeyRejection`. */
  wrongKey: Code.Unauthenticated | Code.PermissionDenied;
  /**
   * Also take the key as `Authorization: Bearer <key>` when X-API-Key is absent (the memory
   * service's contract); the broker and the gateway read X-API-Key only.
   */
  acceptBearer?: boolean;
  /** What the service leaves open; everything else needs a key. */
  exempt?: AuthExemptions;
}

const bearerPattern = /^Bearer\s+(\S+)$/i;

/**
 * The service's one key check: the host runs it once per request, before routing on REST and
 * as an interceptor on gRPC, with the same headers and the same exemptions on both.
 */
export function apiKeyAuthenticator(options: ApiKeyAuthenticatorOptions): Authenticator {
  const { keys, wrongKey } = options;
  const acceptBearer = options.acceptBearer ?? false;
  const exempt = options.exempt ? createExemption(options.exempt) : () => false;
  const presentedKey = (headers: Headers) => {
    const header = normalizeApiKey(headers.get("x-api-key"));
    if (header !== undefined || !acceptBearer) return header;
    return bearerPattern.exec(normalizeApiKey(headers.get("authorization")) ?? "")?.[1];
  };
  return {
    async authenticate(request) {
      if (exempt(request)) return undefined;
      const verdict = keys.check(presentedKey(request.headers));
      const rejection = apiKeyRejection(verdict, wrongKey, acceptBearer);
      if (rejection) throw rejection;
      return undefined;
    },
  };
}
