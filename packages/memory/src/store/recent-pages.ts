import type { Cache, NearCache, Sql } from "@atrium/kit";
import { type Scope, scopeKey } from "../domain.js";
import { type ChainRecord, chainStore } from "./chains.js";

export interface RecentPagesOptions {
  sql: Sql;
  cache: Cache;
  /** Backstop for an invalidation that could not reach the cache; default 60 s. */
  ttlSeconds?: number;
  onCacheError?: (error: unknown, operation: string) => void;
  /**
   * Keeps parsed lists in process memory while their keys are unchanged (see NearCache); the
   * lists' writes then go through `near.cache`.
   */
  near?: NearCache;
  /** Put before every key, so that deployments sharing a Redis keep their pages apart. */
  keyPrefix?: string;
}

// Longer than any cached value lives, so that a generation never restarts under a value that
// was written for it (see invalidate).
const GENERATION_TTL_SECONDS = 24 * 60 * 60;

const DATE_FIELDS = [
  "lastAccessAt",
  "lastStrengthenedAt",
  "promotedAt",
  "firstEventAt",
  "lastEventAt",
] as const;

interface CachedPages {
  generation: string;
  chains: ChainRecord[];
}

function revive(chains: ChainRecord[]): ChainRecord[] {
  for (const chain of chains) {
    for (const field of DATE_FIELDS) {
      const value = chain[field] as unknown as string | null;
      (chain as unknown as Record<string, Date | null>)[field] = value ? new Date(value) : null;
    }
  }
  return chains;
}

/**
 * A scope's most recent chains (GetContext's relevant pages when no query is given), cached so
 * that a context read touches only the cache. Every chain write of a scope bumps the scope's
 * generation after its commit; a cached list counts only if it was read from the database under
 * the current generation, so a reader that raced a writer can at worst store a list nobody will
 * use. Cache failures fall back to the database.
 */
export function createRecentPages(options: RecentPagesOptions) {
  const { sql, near } = options;
  const cache = near?.cache ?? options.cache;
  const ttl = options.ttlSeconds ?? 60;
  const report = (error: unknown, operation: string) => options.onCacheError?.(error, operation);
  const prefix = options.keyPrefix ?? "";
  const generationKey = (scope: Scope) => `${prefix}pages:${scopeKey(scope)}:gen`;
  const listKey = (scope: Scope, limit: number) => `${prefix}pages:${scopeKey(scope)}:${limit}`;

  async function readCached(scope: Scope, limit: number): Promise<ChainRecord[]> {
    let generation: string;
    try {
      // Issued together: one round trip on an auto-pipelined Redis connection.
      const [current, cached] = await Promise.all([
        cache.get(generationKey(scope)),
        cache.get(listKey(scope, limit)),
      ]);
      generation = current ?? "0";
      if (cached) {
        const value = JSON.parse(cached) as CachedPages;
        if (value.generation === generation) return revive(value.chains);
      }
    } catch (error) {
      report(error, "read pages");
      return chainStore.recent(sql, scope, limit);
    }
    const chains = await chainStore.recent(sql, scope, limit);
    const value: CachedPages = { generation, chains };
    await cache
      .set(listKey(scope, limit), JSON.stringify(value), ttl)
      .catch((error) => report(error, "write pages"));
    return chains;
  }

  return {
    /** The scope's `limit` most recent chains that are not archived, newest first; read-only. */
    async read(scope: Scope, limit: number): Promise<ChainRecord[]> {
      if (!near) return readCached(scope, limit);
      const list = listKey(scope, limit);
      return near.read(list, [generationKey(scope), list], () => readCached(scope, limit));
    },

    /** Call after a commit that changed chains of these scopes. */
    async invalidate(scopes: Scope[]): Promise<void> {
      const keys = new Set(scopes.map(generationKey));
      await Promise.all(
        [...keys].map(async (key) => {
          try {
            await cache.incr(key);
            await cache.expire(key, GENERATION_TTL_SECONDS);
          } catch (error) {
            report(error, "invalidate pages");
          }
        }),
      );
    },
  };
}

export type RecentPages = ReturnType<typeof createRecentPages>;
