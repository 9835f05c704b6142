import type { Cache, KeyChangeHandler, KeyWatch, MessageHandler, Unsubscribe } from "./cache.js";
import { type HandlerErrorReporter, warnHandlerError } from "./handler-error.js";
import { assertKeep, resolveListRange } from "./list-range.js";
import { ttlMilliseconds } from "./ttl.js";

export interface MemoryCacheOptions {
  onHandlerError?: HandlerErrorReporter;
  /** How often keys past their TTL are swept out; reads never see them either way. */
  sweepIntervalMs?: number;
}

type Entry =
  | { kind: "string"; value: string; expiresAt?: number }
  | { kind: "list"; value: string[]; expiresAt?: number };

interface Subscription {
  handler: MessageHandler;
  active: boolean;
}

interface Watcher {
  prefixes: string[];
  onChange: KeyChangeHandler;
}

interface Delivery {
  subscription: Subscription;
  channel: string;
  message: string;
}

const wrongType = () =>
  new Error("WRONGTYPE Operation against a key holding the wrong kind of value");

/**
 * The in-process cache: the Redis commands Atrium uses, with Redis's semantics (TTL, list
 * indexes, type errors), for one process without a Redis server.
 */
export function createMemoryCache(options: MemoryCacheOptions = {}): Cache {
  const onHandlerError = options.onHandlerError ?? warnHandlerError;
  const entries = new Map<string, Entry>();
  const expiring = new Set<string>();
  const channels = new Map<string, Set<Subscription>>();
  const watchers = new Set<Watcher>();
  let pending: Delivery[] = [];
  let flushScheduled = false;
  let closed = false;

  const sweep = setInterval(() => {
    for (const key of expiring) live(key);
  }, options.sweepIntervalMs ?? 5000);
  sweep.unref();

  function assertOpen(): void {
    if (closed) throw new Error("cache is closed");
  }

  function live(key: string): Entry | undefined {
    const entry = entries.get(key);
    if (entry?.expiresAt !== undefined && entry.expiresAt <= Date.now()) {
      remove(key);
      return undefined;
    }
    return entry;
  }

  function remove(key: string): boolean {
    expiring.delete(key);
    const removed = entries.delete(key);
    if (removed) changed(key);
    return removed;
  }

  /** Reported synchronously: the change is complete, and nothing can read in between. */
  function changed(key: string): void {
    for (const watcher of watchers) {
      if (watcher.prefixes.some((prefix) => key.startsWith(prefix))) watcher.onChange([key]);
    }
  }

  function setExpiry(key: string, entry: Entry, expiresAt: number | undefined): void {
    entry.expiresAt = expiresAt;
    if (expiresAt === undefined) expiring.delete(key);
    else expiring.add(key);
  }

  function list(key: string, create: boolean): string[] | undefined {
    const entry = live(key);
    if (entry === undefined) {
      if (!create) return undefined;
      const created: Entry = { kind: "list", value: [] };
      entries.set(key, created);
      return created.value;
    }
    if (entry.kind !== "list") throw wrongType();
    return entry.value;
  }

  function increment(key: string): number {
    const entry = live(key);
    if (entry === undefined) {
      entries.set(key, { kind: "string", value: "1" });
      changed(key);
      return 1;
    }
    if (entry.kind !== "string") throw wrongType();
    const current = /^-?\d+$/.test(entry.value) ? Number(entry.value) : Number.NaN;
    if (!Number.isSafeInteger(current) || !Number.isSafeInteger(current + 1)) {
      throw new Error("ERR value is not an integer or out of range");
    }
    entry.value = String(current + 1);
    changed(key);
    return current + 1;
  }

  function deliver(channel: string, message: string): void {
    const subscriptions = channels.get(channel);
    if (subscriptions === undefined) return;
    for (const subscription of subscriptions) pending.push({ subscription, channel, message });
    // Delivered on a later turn, as from a Redis server, but in publish order.
    if (!flushScheduled) {
      flushScheduled = true;
      setImmediate(flush);
    }
  }

  function flush(): void {
    flushScheduled = false;
    const deliveries = pending;
    pending = [];
    for (const { subscription, channel, message } of deliveries) {
      if (!subscription.active) continue;
      try {
        subscription.handler(message, channel);
      } catch (error) {
        onHandlerError(error, channel);
      }
    }
  }

  return {
    kind: "memory",

    async get(key) {
      assertOpen();
      const entry = live(key);
      if (entry === undefined) return null;
      if (entry.kind !== "string") throw wrongType();
      return entry.value;
    },

    async set(key, value, ttlSeconds) {
      assertOpen();
      const expiresAt =
        ttlSeconds === undefined ? undefined : Date.now() + ttlMilliseconds(ttlSeconds);
      const entry: Entry = { kind: "string", value };
      entries.set(key, entry);
      setExpiry(key, entry, expiresAt);
      changed(key);
    },

    async del(...keys) {
      assertOpen();
      let removed = 0;
      for (const key of new Set(keys)) {
        if (live(key) !== undefined && remove(key)) removed++;
      }
      return removed;
    },

    async incr(key) {
      assertOpen();
      return increment(key);
    },

    async expire(key, ttlSeconds) {
      assertOpen();
      const expiresAt = Date.now() + ttlMilliseconds(ttlSeconds);
      const entry = live(key);
      if (entry !== undefined) {
        setExpiry(key, entry, expiresAt);
        changed(key);
      }
    },

    async lpush(key, ...values) {
      assertOpen();
      if (values.length === 0) return list(key, false)?.length ?? 0;
      const items = list(key, true)!;
      for (const value of values) items.unshift(value);
      changed(key);
      return items.length;
    },

    async rpush(key, ...values) {
      assertOpen();
      if (values.length === 0) return list(key, false)?.length ?? 0;
      const items = list(key, true)!;
      items.push(...values);
      changed(key);
      return items.length;
    },

    async lrange(key, start, stop) {
      assertOpen();
      const items = list(key, false) ?? [];
      const range = resolveListRange(items.length, start, stop);
      return range ? items.slice(range.start, range.stop + 1) : [];
    },

    async lpushTrim(key, values, keep) {
      assertOpen();
      assertKeep(keep);
      const items = list(key, values.length > 0);
      if (items === undefined) return;
      for (const value of values) items.unshift(value);
      items.splice(keep);
      changed(key);
    },

    async ltrim(key, start, stop) {
      assertOpen();
      const items = list(key, false);
      if (items === undefined) return;
      const range = resolveListRange(items.length, start, stop);
      if (range === undefined) {
        remove(key);
        return;
      }
      items.splice(range.stop + 1);
      items.splice(0, range.start);
      changed(key);
    },

    async llen(key) {
      assertOpen();
      return list(key, false)?.length ?? 0;
    },

    async publish(channel, message) {
      assertOpen();
      deliver(channel, message);
    },

    async appendSequenced(entry) {
      assertOpen();
      assertKeep(entry.keep);
      // Checked before anything changes, as the Redis script fails before its first write.
      const expiresAt =
        entry.ttlSeconds === undefined ? undefined : Date.now() + ttlMilliseconds(entry.ttlSeconds);
      const items = list(entry.listKey, false);
      const seq = increment(entry.counterKey);
      const message = `${entry.head}${seq}${entry.tail}`;
      const log = items ?? list(entry.listKey, true)!;
      log.push(message);
      if (log.length > entry.keep) log.splice(0, log.length - entry.keep);
      changed(entry.listKey);
      if (expiresAt !== undefined) {
        for (const key of [entry.counterKey, entry.listKey]) setExpiry(key, live(key)!, expiresAt);
      }
      deliver(entry.channel, message);
      return seq;
    },

    async subscribe(channel, handler): Promise<Unsubscribe> {
      assertOpen();
      const subscription: Subscription = { handler, active: true };
      let subscriptions = channels.get(channel);
      if (subscriptions === undefined) {
        subscriptions = new Set();
        channels.set(channel, subscriptions);
      }
      subscriptions.add(subscription);
      return async () => {
        if (!subscription.active) return;
        subscription.active = false;
        const current = channels.get(channel);
        current?.delete(subscription);
        if (current?.size === 0) channels.delete(channel);
      };
    },

    subscriberCount() {
      let count = 0;
      for (const subscriptions of channels.values()) count += subscriptions.size;
      return count;
    },

    async watchKeys(prefixes, onChange): Promise<KeyWatch> {
      assertOpen();
      const watcher: Watcher = { prefixes: [...prefixes], onChange };
      watchers.add(watcher);
      return {
        get active() {
          return watchers.has(watcher);
        },
        async stop() {
          watchers.delete(watcher);
        },
      };
    },

    async ping() {
      assertOpen();
    },

    async close() {
      if (closed) return;
      closed = true;
      clearInterval(sweep);
      for (const subscriptions of channels.values()) {
        for (const subscription of subscriptions) subscription.active = false;
      }
      channels.clear();
      watchers.clear();
      entries.clear();
      expiring.clear();
      pending = [];
    },
  };
}
