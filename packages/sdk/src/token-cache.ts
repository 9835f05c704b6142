import type { ConnectionToken } from "./gateway-types.js";

export interface TokenCacheOptions {
  /** A token is treated as expired this long before its expires_at. Default 30 s. */
  expirySkewMs?: number;
  /**
   * How long a credential without expires_at (a static key) is reused before asking again, so a
   * revocation reaches this process within that time. Default 60 s.
   */
  staticTtlMs?: number;
  now?: () => number;
}

export interface TokenCache {
  get(connectionId: string): ConnectionToken | undefined;
  set(connectionId: string, token: ConnectionToken): void;
  delete(connectionId: string): void;
  clear(): void;
}

export const defaultExpirySkewMs = 30_000;
export const defaultStaticTtlMs = 60_000;

export function createTokenCache(options: TokenCacheOptions = {}): TokenCache {
  const skew = options.expirySkewMs ?? defaultExpirySkewMs;
  const staticTtl = options.staticTtlMs ?? defaultStaticTtlMs;
  const now = options.now ?? Date.now;
  const entries = new Map<string, { token: ConnectionToken; usableUntil: number }>();

  return {
    get(connectionId) {
      const entry = entries.get(connectionId);
      if (entry === undefined) return undefined;
      if (now() >= entry.usableUntil) {
        entries.delete(connectionId);
        return undefined;
      }
      return entry.token;
    },
    set(connectionId, token) {
      const expiresAt = token.expires_at ? Date.parse(token.expires_at) : Number.NaN;
      const usableUntil = Number.isNaN(expiresAt) ? now() + staticTtl : expiresAt - skew;
      if (usableUntil > now()) entries.set(connectionId, { token, usableUntil });
      else entries.delete(connectionId);
    },
    delete(connectionId) {
      entries.delete(connectionId);
    },
    clear() {
      entries.clear();
    },
  };
}
