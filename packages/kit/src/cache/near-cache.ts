import type { Cache, KeyWatch } from "./cache.js";

export interface NearCacheOptions {
  cache: Cache;
  /** The key prefixes whose values may be remembered; every key read must start with one. */
  prefixes: string[];
  /** Values remembered at most, least recently used dropped first; default 10,000. */
  maxEntries?: number;
}

export interface NearCache {
  /**
   * The value `load` computes from the cache `keys`, remembered in this process until one of
   * the keys changes (anywhere: another process's write is reported by the cache). Remembered
   * values are shared between callers: treat them as read-only.
   */
  read<T>(id: string, keys: string[], load: () => Promise<T>): Promise<T>;
  /** The cache, with each write through it forgetting what was read from its key once it is done. */
  readonly cache: Cache;
  close(): Promise<void>;
}

interface Entry {
  id: string;
  keys: string[];
  loaded: boolean;
  value: unknown;
}

const WRITES = ["set", "del", "incr", "expire", "lpush", "rpush", "ltrim", "lpushTrim"] as const;

/**
 * Values read from the cache, kept in process memory while the cache reports that their keys are
 * unchanged: a hot read costs no round trip and no parsing. Ours, because a near cache has to
 * know what a value was computed from (several keys, parsed) and no library fits a pluggable
 * cache port.
 *
 * Correctness rests on three rules. A value is remembered only if no change of its keys was
 * reported between the start of its load and its end (a report can overtake the read's reply, as
 * they travel on different connections). Nothing is remembered while the watch is inactive, and
 * everything is forgotten when it turns inactive. A write through `cache` forgets its key as soon
 * as the write is done, so this process reads its own writes without waiting for the report.
 * Another process's write reaches this one as fast as Redis delivers the report: a read here may
 * miss a write made elsewhere in the last moment (typically well under a millisecond).
 */
export async function createNearCache(options: NearCacheOptions): Promise<NearCache> {
  const maxEntries = options.maxEntries ?? 10_000;
  const entries = new Map<string, Entry>();
  const byKey = new Map<string, Set<Entry>>();

  function remove(entry: Entry): void {
    if (entries.get(entry.id) === entry) entries.delete(entry.id);
    for (const key of entry.keys) {
      const dependents = byKey.get(key);
      dependents?.delete(entry);
      if (dependents?.size === 0) byKey.delete(key);
    }
  }

  function forget(keys: string[] | undefined): void {
    if (keys === undefined) {
      entries.clear();
      byKey.clear();
      return;
    }
    for (const key of keys) {
      const dependents = byKey.get(key);
      if (dependents) for (const entry of [...dependents]) remove(entry);
    }
  }

  const watch: KeyWatch = await options.cache.watchKeys(options.prefixes, forget);

  const cache: Cache = { ...options.cache };
  for (const name of WRITES) {
    const write = options.cache[name] as (key: string, ...rest: unknown[]) => Promise<unknown>;
    (cache as unknown as Record<string, unknown>)[name] = async (
      key: string,
      ...rest: unknown[]
    ) => {
      try {
        return await write.call(options.cache, key, ...rest);
      } finally {
        // `del` takes several keys.
        forget(name === "del" ? [key, ...(rest as string[])] : [key]);
      }
    };
  }

  cache.appendSequenced = async (entry) => {
    try {
      return await options.cache.appendSequenced(entry);
    } finally {
      forget([entry.counterKey, entry.listKey]);
    }
  };

  return {
    cache,

    async read<T>(id: string, keys: string[], load: () => Promise<T>): Promise<T> {
      if (!watch.active) return load();
      const known = entries.get(id);
      if (known?.loaded) {
        // Most recently used last: the first in the map is the one to drop.
        entries.delete(id);
        entries.set(id, known);
        return known.value as T;
      }
      if (known) remove(known);
      const entry: Entry = { id, keys, loaded: false, value: undefined };
      entries.set(id, entry);
      for (const key of keys) {
        let dependents = byKey.get(key);
        if (!dependents) {
          dependents = new Set();
          byKey.set(key, dependents);
        }
        dependents.add(entry);
      }
      let value: T;
      try {
        value = await load();
      } catch (error) {
        remove(entry);
        throw error;
      }
      // Still registered: no change of its keys was reported while it loaded.
      if (entries.get(id) === entry && watch.active) {
        entry.loaded = true;
        entry.value = value;
        if (entries.size > maxEntries) {
          const oldest = entries.values().next().value as Entry;
          remove(oldest);
        }
      }
      return value;
    },

    async close() {
      forget(undefined);
      await watch.stop();
    },
  };
}
