import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { describe, type TestContext, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import type { Cache } from "../cache/cache.js";
import type { HandlerErrorReporter } from "../cache/handler-error.js";
import { eventually } from "./eventually.js";

/** Opens a fresh cache for one test, or returns undefined when the test was skipped. */
export type OpenCache = (
  t: TestContext,
  onHandlerError?: HandlerErrorReporter,
) => Promise<Cache | undefined>;

interface Fixture {
  cache: Cache;
  /** A key unique to this test, deleted after it. */
  key(name: string): string;
  /** A channel unique to this test. */
  channel(name: string): string;
}

async function setUp(
  t: TestContext,
  open: OpenCache,
  onHandlerError?: HandlerErrorReporter,
): Promise<Fixture | undefined> {
  const cache = await open(t, onHandlerError);
  if (cache === undefined) return undefined;
  const prefix = `atrium-test:${randomUUID()}:`;
  const used = new Set<string>();
  t.after(async () => {
    if (used.size > 0) await cache.del(...used).catch(() => undefined);
    await cache.close();
  });
  return {
    cache,
    key(name) {
      used.add(prefix + name);
      return prefix + name;
    },
    channel: (name) => prefix + name,
  };
}

/** The behaviour every Cache adapter must share; each adapter's test file runs it. */
export function cacheContract(adapter: string, open: OpenCache): void {
  describe(`Cache contract (${adapter})`, () => {
    test("get, set, overwrite and del", async (t) => {
      const f = await setUp(t, open);
      if (!f) return;
      const [a, b, missing] = [f.key("a"), f.key("b"), f.key("missing")];
      assert.equal(await f.cache.get(a), null);
      await f.cache.set(a, "1");
      await f.cache.set(a, "2");
      await f.cache.set(b, "");
      assert.equal(await f.cache.get(a), "2");
      assert.equal(await f.cache.get(b), "");
      assert.equal(await f.cache.del(a, b, missing), 2);
      assert.equal(await f.cache.get(a), null);
      assert.equal(await f.cache.del(), 0);
    });

    test("values with a TTL expire; a plain set clears an earlier TTL", async (t) => {
      const f = await setUp(t, open);
      if (!f) return;
      const [short, long, expired, kept] = ["short", "long", "expired", "kept"].map(f.key);
      await f.cache.set(long, "stays", 600);
      await f.cache.set(short, "goes", 0.1);
      await f.cache.set(kept, "first", 0.1);
      await f.cache.set(kept, "second");
      await f.cache.set(expired, "goes later");
      await f.cache.expire(expired, 0.1);
      await eventually("short-lived keys expired", async () => {
        return (await f.cache.get(short)) === null && (await f.cache.get(expired)) === null;
      });
      assert.equal(await f.cache.get(long), "stays");
      assert.equal(await f.cache.get(kept), "second");
      await assert.rejects(f.cache.set(long, "x", 0), RangeError);
      await assert.rejects(f.cache.expire(long, -1), RangeError);
    });

    test("lists follow LRANGE and LTRIM index rules, negatives included", async (t) => {
      const f = await setUp(t, open);
      if (!f) return;
      const list = f.key("list");
      assert.deepEqual(await f.cache.lrange(list, 0, -1), []);
      assert.equal(await f.cache.llen(list), 0);
      assert.equal(await f.cache.rpush(list, "a", "b", "c", "d", "e"), 5);
      assert.deepEqual(await f.cache.lrange(list, 0, -1), ["a", "b", "c", "d", "e"]);
      assert.deepEqual(await f.cache.lrange(list, 1, 2), ["b", "c"]);
      assert.deepEqual(await f.cache.lrange(list, -2, -1), ["d", "e"]);
      assert.deepEqual(await f.cache.lrange(list, 3, 100), ["d", "e"]);
      assert.deepEqual(await f.cache.lrange(list, -100, 1), ["a", "b"]);
      assert.deepEqual(await f.cache.lrange(list, 5, 10), []);
      assert.deepEqual(await f.cache.lrange(list, 3, 1), []);
      assert.deepEqual(await f.cache.lrange(list, -1, -3), []);
      assert.equal(await f.cache.lpush(list, "x", "y"), 7);
      assert.deepEqual(await f.cache.lrange(list, 0, 2), ["y", "x", "a"]);
      await f.cache.ltrim(list, 0, 4);
      assert.deepEqual(await f.cache.lrange(list, 0, -1), ["y", "x", "a", "b", "c"]);
      await f.cache.ltrim(list, -3, -2);
      assert.deepEqual(await f.cache.lrange(list, 0, -1), ["a", "b"]);
      assert.equal(await f.cache.llen(list), 2);
      await f.cache.ltrim(list, 5, 10);
      assert.equal(await f.cache.llen(list), 0);
      assert.equal(await f.cache.get(list), null);
    });

    test("a capped newest-first window keeps the latest entries", async (t) => {
      const f = await setUp(t, open);
      if (!f) return;
      const window = f.key("window");
      for (let i = 1; i <= 6; i++) {
        await f.cache.lpush(window, `event-${i}`);
        await f.cache.ltrim(window, 0, 2);
      }
      assert.deepEqual(await f.cache.lrange(window, 0, -1), ["event-6", "event-5", "event-4"]);
    });

    test("lpushTrim prepends and caps in one call", async (t) => {
      const f = await setUp(t, open);
      if (!f) return;
      const window = f.key("capped");
      await f.cache.lpushTrim(window, ["a", "b"], 3);
      assert.deepEqual(await f.cache.lrange(window, 0, -1), ["b", "a"]);
      await f.cache.lpushTrim(window, ["c", "d"], 3);
      assert.deepEqual(await f.cache.lrange(window, 0, -1), ["d", "c", "b"]);
      await f.cache.lpushTrim(window, [], 2);
      assert.deepEqual(await f.cache.lrange(window, 0, -1), ["d", "c"]);
      const absent = f.key("absent");
      await f.cache.lpushTrim(absent, [], 2);
      assert.equal(await f.cache.llen(absent), 0);
      await assert.rejects(f.cache.lpushTrim(window, ["x"], 0), RangeError);
      assert.deepEqual(await f.cache.lrange(window, 0, -1), ["d", "c"]);
      const text = f.key("text");
      await f.cache.set(text, "v");
      await assert.rejects(f.cache.lpushTrim(text, ["x"], 2), /WRONGTYPE/);
      assert.equal(await f.cache.get(text), "v");
    });

    test("commands against a key of the other type are rejected", async (t) => {
      const f = await setUp(t, open);
      if (!f) return;
      const [text, list] = [f.key("text"), f.key("list")];
      await f.cache.set(text, "value");
      await f.cache.rpush(list, "item");
      await assert.rejects(f.cache.get(list), /WRONGTYPE/);
      await assert.rejects(f.cache.lpush(text, "x"), /WRONGTYPE/);
      await assert.rejects(f.cache.incr(list), /WRONGTYPE/);
    });

    test("incr counts from 1, continues from a numeric value, rejects text", async (t) => {
      const f = await setUp(t, open);
      if (!f) return;
      const [counter, numeric, text] = [f.key("counter"), f.key("numeric"), f.key("text")];
      assert.equal(await f.cache.incr(counter), 1);
      assert.equal(await f.cache.incr(counter), 2);
      assert.equal(await f.cache.get(counter), "2");
      await f.cache.set(numeric, "41");
      assert.equal(await f.cache.incr(numeric), 42);
      await f.cache.set(text, "abc");
      await assert.rejects(f.cache.incr(text), /not an integer/);
    });

    test("appendSequenced numbers, lists, caps and publishes entries in order", async (t) => {
      const f = await setUp(t, open);
      if (!f) return;
      const [counter, log] = [f.key("seq"), f.key("log")];
      const channel = f.channel("sequenced");
      const received: string[] = [];
      const unsubscribe = await f.cache.subscribe(channel, (message) => received.push(message));
      const append = () =>
        f.cache.appendSequenced({
          counterKey: counter,
          listKey: log,
          keep: 3,
          channel,
          head: '{"seq":',
          tail: "}",
          ttlSeconds: 600,
        });
      // Issued together, as concurrent writers would: numbers are still handed out in order.
      const numbers = await Promise.all(Array.from({ length: 5 }, append));
      assert.deepEqual(numbers, [1, 2, 3, 4, 5]);
      const sent = numbers.map((n) => `{"seq":${n}}`);
      assert.deepEqual(await f.cache.lrange(log, 0, -1), sent.slice(-3));
      assert.equal(await f.cache.get(counter), "5");
      await eventually("every entry was published", () => received.length >= sent.length);
      assert.deepEqual(received, sent);
      await unsubscribe();
    });

    test("appendSequenced expires the counter and the list; bad input changes nothing", async (t) => {
      const f = await setUp(t, open);
      if (!f) return;
      const [counter, log, text] = [f.key("seq"), f.key("log"), f.key("text")];
      const entry = { counterKey: counter, listKey: log, keep: 10, channel: f.channel("c") };
      await f.cache.appendSequenced({ ...entry, head: "a", tail: "", ttlSeconds: 0.1 });
      await eventually("both keys expired", async () => {
        return (await f.cache.get(counter)) === null && (await f.cache.llen(log)) === 0;
      });
      await assert.rejects(f.cache.appendSequenced({ ...entry, keep: 0, head: "", tail: "" }));
      await f.cache.set(text, "not a list");
      await assert.rejects(
        f.cache.appendSequenced({ ...entry, listKey: text, head: "", tail: "" }),
        /WRONGTYPE/,
      );
      assert.equal(await f.cache.get(counter), null, "a rejected entry takes no number");
    });

    test("messages arrive in publish order with their channel", async (t) => {
      const f = await setUp(t, open);
      if (!f) return;
      const channel = f.channel("ordered");
      const received: string[] = [];
      const unsubscribe = await f.cache.subscribe(channel, (message, from) => {
        assert.equal(from, channel);
        received.push(message);
      });
      const sent = Array.from({ length: 50 }, (_, i) => `m${i}`);
      for (const message of sent) await f.cache.publish(channel, message);
      await eventually("all messages arrived", () => received.length >= sent.length);
      assert.deepEqual(received, sent);
      await unsubscribe();
    });

    test("a publish right after subscribe resolves is received", async (t) => {
      const f = await setUp(t, open);
      if (!f) return;
      const channel = f.channel("ack");
      const first: string[] = [];
      const second: string[] = [];
      const [unsubscribeFirst, unsubscribeSecond] = await Promise.all([
        f.cache.subscribe(channel, (message) => first.push(message)),
        f.cache.subscribe(channel, (message) => second.push(message)),
      ]);
      await f.cache.publish(channel, "hello");
      await eventually("both handlers received", () => first.length > 0 && second.length > 0);
      assert.deepEqual([first, second], [["hello"], ["hello"]]);
      await unsubscribeFirst();
      await unsubscribeSecond();
    });

    test("unsubscribe is idempotent and stops delivery to that handler only", async (t) => {
      const f = await setUp(t, open);
      if (!f) return;
      const [channel, other] = [f.channel("stop"), f.channel("other")];
      assert.equal(f.cache.subscriberCount(), 0);
      const leaving: string[] = [];
      const staying: string[] = [];
      const unsubscribeLeaving = await f.cache.subscribe(channel, (m) => leaving.push(m));
      const unsubscribeStaying = await f.cache.subscribe(channel, (m) => staying.push(m));
      const unsubscribeOther = await f.cache.subscribe(other, () => undefined);
      assert.equal(f.cache.subscriberCount(), 3);
      await unsubscribeLeaving();
      await unsubscribeLeaving();
      assert.equal(f.cache.subscriberCount(), 2);
      await f.cache.publish(channel, "after");
      await eventually("the remaining handler received", () => staying.length > 0);
      assert.deepEqual(leaving, []);
      await Promise.all([unsubscribeStaying(), unsubscribeOther(), unsubscribeStaying()]);
      assert.equal(f.cache.subscriberCount(), 0);

      const again: string[] = [];
      const unsubscribeAgain = await f.cache.subscribe(channel, (m) => again.push(m));
      await f.cache.publish(channel, "resubscribed");
      await eventually("a new subscription after the last one left", () => again.length > 0);
      assert.deepEqual(again, ["resubscribed"]);
      await unsubscribeAgain();
      assert.equal(f.cache.subscriberCount(), 0);
    });

    test("subscribes and unsubscribes racing on one channel settle on the live handlers", async (t) => {
      const f = await setUp(t, open);
      if (!f) return;
      const channel = f.channel("churn");
      const received: string[] = [];
      const churn = Array.from({ length: 20 }, async () => {
        const unsubscribe = await f.cache.subscribe(channel, () => undefined);
        await unsubscribe();
      });
      const [unsubscribe] = await Promise.all([
        f.cache.subscribe(channel, (m) => received.push(m)),
        ...churn,
      ]);
      assert.equal(f.cache.subscriberCount(), 1);
      await f.cache.publish(channel, "settled");
      await eventually("the live handler received", () => received.length > 0);
      await unsubscribe();
      assert.equal(f.cache.subscriberCount(), 0);
    });

    test("many handlers on one channel each get every message once", async (t) => {
      const errors: unknown[] = [];
      const f = await setUp(t, open, (error) => errors.push(error));
      if (!f) return;
      const channel = f.channel("fan-out");
      const inboxes = Array.from({ length: 10 }, () => [] as string[]);
      const unsubscribes = await Promise.all(
        inboxes.map((inbox) => f.cache.subscribe(channel, (m) => inbox.push(m))),
      );
      const unsubscribeFaulty = await f.cache.subscribe(channel, () => {
        throw new Error("faulty handler");
      });
      assert.equal(f.cache.subscriberCount(), 11);
      await f.cache.publish(channel, "one");
      await f.cache.publish(channel, "two");
      await eventually("every handler received both", () =>
        inboxes.every((inbox) => inbox.length >= 2),
      );
      for (const inbox of inboxes) assert.deepEqual(inbox, ["one", "two"]);
      assert.equal(errors.length, 2);
      await Promise.all([...unsubscribes, unsubscribeFaulty].map((unsubscribe) => unsubscribe()));
      assert.equal(f.cache.subscriberCount(), 0);
    });

    test("watchKeys reports every change of a watched key, and only of watched keys", async (t) => {
      const f = await setUp(t, open);
      if (!f) return;
      const watched = f.key("watched:");
      const [a, counter, list, expiring, other] = [
        f.key("watched:a"),
        f.key("watched:counter"),
        f.key("watched:list"),
        f.key("watched:expiring"),
        f.key("other"),
      ];
      const reported: string[] = [];
      const watch = await f.cache.watchKeys([watched], (keys) => {
        if (keys) reported.push(...keys);
      });
      t.after(() => watch.stop());
      await eventually("the watch is active", () => watch.active);
      const saw = (key: string) => eventually(`${key} was reported`, () => reported.includes(key));

      await f.cache.set(a, "1");
      await saw(a);
      await f.cache.incr(counter);
      await saw(counter);
      await f.cache.lpushTrim(list, ["x"], 5);
      await saw(list);
      await f.cache.set(other, "1");
      reported.length = 0;
      await f.cache.ltrim(list, 1, 1);
      await saw(list);
      // Reports arrive in order: had `other` been reported, it would have come before.
      assert.ok(!reported.includes(other), "an unwatched key is not reported");
      reported.length = 0;
      await f.cache.del(a);
      await saw(a);
      reported.length = 0;
      await f.cache.set(expiring, "1", 0.05);
      await saw(expiring);
      reported.length = 0;
      await sleep(80);
      assert.equal(await f.cache.get(expiring), null);
      await saw(expiring);

      await watch.stop();
      assert.equal(watch.active, false);
      reported.length = 0;
      await f.cache.set(a, "2");
      await sleep(50);
      assert.deepEqual(reported, [], "a stopped watch reports nothing");
    });

    test("ping answers; after close commands are rejected and no handler is left", async (t) => {
      const cache = await open(t);
      if (!cache) return;
      await cache.ping();
      await cache.subscribe(`atrium-test:${randomUUID()}`, () => undefined);
      await cache.close();
      await cache.close();
      assert.equal(cache.subscriberCount(), 0);
      await assert.rejects(cache.get(`atrium-test:${randomUUID()}`));
    });
  });
}
