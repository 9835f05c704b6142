import type { Cache, NearCache } from "@atrium/kit";
import { type Scope, type StmEvent, scopeKey } from "../domain.js";
import type { EventStore, InsertedEvent } from "../store/events.js";

export interface StmWindowOptions {
  cache: Cache;
  events: EventStore;
  /** Events kept in the cache per scope; default 200. Larger reads go to the durable store. */
  size?: number;
  onCacheError?: (error: unknown, operation: string) => void;
  /**
   * Keeps parsed windows in process memory while their keys are unchanged (see NearCache); the
   * window's writes then go through `near.cache`.
   */
  near?: NearCache;
  /** Put before every key, so that deployments sharing a Redis keep their windows apart. */
  keyPrefix?: string;
}

interface CachedEvent extends Omit<StmEvent, "timestamp" | "source"> {
  timestamp: string;
  /** Absent in windows cached before sources were recorded: such an event reads as its role. */
  source?: StmEvent["source"];
}

const serialize = (e: StmEvent) => JSON.stringify({ ...e, timestamp: e.timestamp.toISOString() });
const parse = (s: string): StmEvent => {
  const c = JSON.parse(s) as CachedEvent;
  return { ...c, source: c.source ?? c.role, timestamp: new Date(c.timestamp) };
};

/** Chronological order: by timestamp, then by storage order (the input is newest first). */
function chronological(newestFirst: StmEvent[]): StmEvent[] {
  return newestFirst
    .map((e, i) => ({ e, i }))
    .sort((a, b) => a.e.timestamp.getTime() - b.e.timestamp.getTime() || b.i - a.i)
    .map(({ e }) => e);
}

/**
 * The STM window: a cache list per scope (`[prefix]stm:{scope}`, newest first, trimmed) over the durable
 * events. A `:warm` marker says the list holds the whole window; without it (a new scope, a
 * flushed or restarted cache) a read that the list cannot answer is served from the durable
 * store and refills the list. The cache only ever speeds reads up: when it fails, reads go to
 * the durable store and a failed write drops the list so that it is rebuilt.
 */
export function createStmWindow(options: StmWindowOptions) {
  const { events, near } = options;
  const cache = near?.cache ?? options.cache;
  const size = options.size ?? 200;
  const prefix = options.keyPrefix ?? "";
  const listKey = (scope: Scope) => `${prefix}stm:${scopeKey(scope)}`;
  const warmKey = (scope: Scope) => `${prefix}stm:${scopeKey(scope)}:warm`;
  const report = (error: unknown, operation: string) => options.onCacheError?.(error, operation);
  /**
   * Keys whose drop failed along with a write (Redis away): until they are gone a list could
   * still claim to be the whole window without the events written meanwhile. Dropped before the
   * window next uses the cache, and by `dropStale` when Redis is back.
   */
  const stale = new Set<string>();

  async function dropStale(): Promise<void> {
    if (stale.size === 0) return;
    const keys = [...stale];
    await cache.del(...keys);
    for (const key of keys) stale.delete(key);
  }

  /** After a failed write: the list no longer matches the durable window. */
  async function dropAfterFailure(scope: Scope): Promise<void> {
    const keys = [listKey(scope), warmKey(scope)];
    await cache.del(...keys).catch(() => {
      for (const key of keys) stale.add(key);
    });
  }

  async function refill(scope: Scope): Promise<StmEvent[]> {
    const newest = await events.newest(scope, size);
    try {
      await dropStale();
      await cache.del(listKey(scope));
      if (newest.length > 0) await cache.rpush(listKey(scope), ...newest.map(serialize));
      await cache.set(warmKey(scope), "1");
    } catch (error) {
      report(error, "refill");
    }
    return newest;
  }

  async function append(scope: Scope, event: StmEvent, supersedes?: string): Promise<void> {
    const key = listKey(scope);
    try {
      await dropStale();
      if (supersedes) {
        const [head] = await cache.lrange(key, 0, 0);
        if (head && parse(head).id === supersedes) await cache.ltrim(key, 1, -1);
        else {
          // The list does not end where the durable window does: rebuild it on next read.
          await cache.del(key, warmKey(scope));
          return;
        }
      }
      await cache.lpushTrim(key, [serialize(event)], size);
    } catch (error) {
      report(error, "append");
      await dropAfterFailure(scope);
    }
  }

  async function readCached(scope: Scope, limit: number): Promise<StmEvent[]> {
    try {
      await dropStale();
      // One round trip when the list is long enough, the usual case; the marker is read only
      // when it is short, to tell a small window from a cold cache.
      const cached = await cache.lrange(listKey(scope), 0, limit - 1);
      if (cached.length === limit || (await cache.get(warmKey(scope)))) {
        return chronological(cached.map(parse));
      }
    } catch (error) {
      report(error, "read");
      return chronological(await events.newest(scope, limit));
    }
    return chronological((await refill(scope)).slice(0, limit));
  }

  return {
    append,

    /**
     * Drops the scopes' cached windows, after a commit that erased events: every instance
     * rebuilds them from the database. A failure throws, the keys left to be dropped first.
     */
    async drop(scopes: Scope[]): Promise<void> {
      const keys = scopes.flatMap((scope) => [listKey(scope), warmKey(scope)]);
      if (keys.length === 0) return;
      try {
        await cache.del(...keys);
      } catch (error) {
        for (const key of keys) stale.add(key);
        throw error;
      }
    },

    /** Call when the cache is reachable again; a failure leaves the keys for the next use. */
    dropStale: () => dropStale().catch((error) => report(error, "drop stale")),

    /** Events stored together, in storage order; one cache round trip unless one coalesced. */
    async appendAll(scope: Scope, stored: InsertedEvent[]): Promise<void> {
      if (stored.some((s) => s.supersedes)) {
        for (const { event, supersedes } of stored) await append(scope, event, supersedes);
        return;
      }
      try {
        await dropStale();
        await cache.lpushTrim(
          listKey(scope),
          stored.map((s) => serialize(s.event)),
          size,
        );
      } catch (error) {
        report(error, "append");
        await dropAfterFailure(scope);
      }
    },

    /** The newest `limit` events of the scope, in chronological order; shared, read-only. */
    async read(scope: Scope, limit: number): Promise<StmEvent[]> {
      if (limit <= 0) return [];
      if (limit > size) return chronological(await events.newest(scope, limit));
      if (!near) return readCached(scope, limit);
      const list = listKey(scope);
      return near.read(`${list}#${limit}`, [list, warmKey(scope)], () => readCached(scope, limit));
    },
  };
}

export type StmWindow = ReturnType<typeof createStmWindow>;
