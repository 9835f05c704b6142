import type { Cache, MessageHandler, Unsubscribe } from "@atrium/kit";

/**
 * A tiny in-process Cache for this package's tests while the kit's adapters are being written.
 * Subscriptions are acknowledged asynchronously, like a real server.
 */
export function createTestCache(): Cache {
  const values = new Map<string, string>();
  const lists = new Map<string, string[]>();
  const handlers = new Map<string, Set<MessageHandler>>();
  let count = 0;
  const list = (key: string) => {
    let l = lists.get(key);
    if (!l) {
      l = [];
      lists.set(key, l);
    }
    return l;
  };
  const norm = (len: number, i: number) => (i < 0 ? Math.max(len + i, 0) : i);
  return {
    kind: "memory",
    async get(key) {
      return values.get(key) ?? null;
    },
    async set(key, value) {
      values.set(key, value);
    },
    async del(...keys) {
      let n = 0;
      for (const k of keys) if (values.delete(k) || lists.delete(k)) n++;
      return n;
    },
    async incr(key) {
      const next = Number(values.get(key) ?? "0") + 1;
      values.set(key, String(next));
      return next;
    },
    async expire() {},
    async lpush(key, ...items) {
      list(key).unshift(...items.reverse());
      return list(key).length;
    },
    async rpush(key, ...items) {
      list(key).push(...items);
      return list(key).length;
    },
    async lrange(key, start, stop) {
      const l = list(key);
      return l.slice(norm(l.length, start), norm(l.length, stop) + 1);
    },
    async ltrim(key, start, stop) {
      const l = list(key);
      lists.set(key, l.slice(norm(l.length, start), norm(l.length, stop) + 1));
    },
    async llen(key) {
      return list(key).length;
    },
    async publish(channel, message) {
      for (const h of handlers.get(channel) ?? []) h(message, channel);
    },
    async subscribe(channel, handler) {
      await new Promise((r) => setImmediate(r));
      // Each subscription gets its own wrapper so one handler subscribed twice counts twice.
      const wrapped: MessageHandler = (m, c) => handler(m, c);
      let set = handlers.get(channel);
      if (!set) {
        set = new Set();
        handlers.set(channel, set);
      }
      set.add(wrapped);
      count++;
      let done = false;
      const unsubscribe: Unsubscribe = async () => {
        if (done) return;
        done = true;
        set.delete(wrapped);
        count--;
      };
      return unsubscribe;
    },
    subscriberCount() {
      return count;
    },
    async ping() {},
    async close() {},
  };
}
