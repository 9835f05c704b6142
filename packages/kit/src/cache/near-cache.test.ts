import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { describe, type TestContext, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import { eventually } from "../testing/eventually.js";
import { needsServer, redisUrl } from "../testing/servers.js";
import type { Cache } from "./cache.js";
import { createMemoryCache } from "./memory-cache.js";
import { createNearCache } from "./near-cache.js";
import { createRedisCache } from "./redis-cache.js";

interface Setup {
  /** The cache the near cache sits in front of. */
  cache: Cache;
  /** Another client of the same data (another process, for Redis). */
  elsewhere: Cache;
}

const adapters: Record<string, (t: TestContext) => Promise<Setup | undefined>> = {
  memory: async () => {
    const cache = createMemoryCache();
    return { cache, elsewhere: cache };
  },
  redis: async (t) => {
    if (!(await needsServer(t, "redis"))) return undefined;
    const cache = createRedisCache({ url: redisUrl(), connectionName: `near-${randomUUID()}` });
    const elsewhere = createRedisCache({ url: redisUrl() });
    t.after(() => elsewhere.close());
    return { cache, elsewhere };
  },
};

async function open(t: TestContext, adapter: string, maxEntries?: number) {
  const setup = await adapters[adapter]!(t);
  if (!setup) return undefined;
  const prefix = `atrium-test:${randomUUID()}:`;
  const near = await createNearCache({ cache: setup.cache, prefixes: [prefix], maxEntries });
  t.after(async () => {
    await near.close();
    await setup.cache.close();
  });
  await eventually("the key watch is active", async () => {
    // Only a remembered read shows that the watch works: a read right after another loads nothing.
    let loads = 0;
    const probe = `${prefix}probe`;
    await near.read(probe, [probe], async () => loads++);
    const before = loads;
    await near.read(probe, [probe], async () => loads++);
    return loads === before;
  });
  let loads = 0;
  /** Reads `key` through the near cache, counting the reads that went to the cache. */
  const read = (key: string) =>
    near.read(key, [key], async () => {
      loads++;
      return setup.cache.get(key);
    });
  return { ...setup, near, key: (name: string) => prefix + name, read, loads: () => loads };
}

for (const adapter of Object.keys(adapters)) {
  describe(`near cache (${adapter})`, () => {
    test("remembers a read until another client changes its key", async (t) => {
      const f = await open(t, adapter);
      if (!f) return;
      const key = f.key("a");
      await f.elsewhere.set(key, "1");
      assert.equal(await f.read(key), "1");
      assert.equal(await f.read(key), "1");
      assert.equal(f.loads(), 1, "the second read was remembered");
      await f.elsewhere.set(key, "2");
      await eventually("the other client's write is seen", async () => (await f.read(key)) === "2");
      await f.read(key);
      assert.equal(f.loads(), 2, "read once more after the change, then remembered again");
    });

    test("a value computed from several keys is forgotten when any of them changes", async (t) => {
      const f = await open(t, adapter);
      if (!f) return;
      const [a, b] = [f.key("a"), f.key("b")];
      await f.elsewhere.set(a, "1");
      await f.elsewhere.set(b, "2");
      let loads = 0;
      const both = () =>
        f.near.read("both", [a, b], async () => {
          loads++;
          return `${await f.cache.get(a)}${await f.cache.get(b)}`;
        });
      assert.equal(await both(), "12");
      await f.elsewhere.set(b, "3");
      await eventually("the change of the second key is seen", async () => (await both()) === "13");
      assert.equal(loads, 2);
    });

    test("reads its own writes at once", async (t) => {
      const f = await open(t, adapter);
      if (!f) return;
      const key = f.key("a");
      await f.near.cache.set(key, "1");
      assert.equal(await f.read(key), "1");
      await f.near.cache.set(key, "2");
      assert.equal(await f.read(key), "2");
      await f.near.cache.del(key);
      assert.equal(await f.read(key), null);
    });

    test("does not remember a value whose key changed while it loaded", async (t) => {
      const f = await open(t, adapter);
      if (!f) return;
      const key = f.key("a");
      await f.elsewhere.set(key, "old");
      let loads = 0;
      const read = () =>
        f.near.read(key, [key], async () => {
          loads++;
          const value = await f.cache.get(key);
          if (loads === 1) {
            // Another client writes after this read was answered, before it is remembered; the
            // pause lets the change's report arrive first.
            await f.elsewhere.set(key, "new");
            await sleep(100);
          }
          return value;
        });
      assert.equal(await read(), "old");
      assert.equal(await read(), "new", "the stale value was not kept");
      assert.equal(loads, 2);
    });

    test("keeps at most maxEntries values, dropping the least recently used", async (t) => {
      const f = await open(t, adapter, 2);
      if (!f) return;
      const [a, b, c] = [f.key("a"), f.key("b"), f.key("c")];
      await f.read(a);
      await f.read(b);
      await f.read(a);
      await f.read(c);
      assert.equal(f.loads(), 3);
      await f.read(a);
      assert.equal(f.loads(), 3, "a was used recently and is kept");
      await f.read(b);
      assert.equal(f.loads(), 4, "b was dropped");
    });
  });
}

/** Kills the near cache's connection named `<name>:<role>` from outside. */
async function killConnection(name: string, role: string) {
  const admin = new Redis(redisUrl());
  try {
    const clients = (await admin.client("LIST")) as string;
    const line = clients.split("\n").find((l) => l.includes(` name=${name}:${role} `));
    const id = line?.match(/^id=(\d+)/)?.[1];
    assert.ok(id, `the ${role} connection is listed by name`);
    await admin.client("KILL", "ID", id);
  } finally {
    await admin.quit();
  }
}

for (const role of ["tracking", "tracking-control"]) {
  test(`near cache (redis): forgets everything and remembers nothing while its ${role} connection is down, then recovers`, async (t) => {
    if (!(await needsServer(t, "redis"))) return;
    const name = `near-${randomUUID()}`;
    const cache = createRedisCache({ url: redisUrl(), connectionName: name });
    const elsewhere = createRedisCache({ url: redisUrl() });
    const prefix = `atrium-test:${randomUUID()}:`;
    const near = await createNearCache({ cache, prefixes: [prefix] });
    t.after(async () => {
      await near.close();
      await Promise.all([cache.close(), elsewhere.close()]);
    });
    const key = `${prefix}a`;
    let loads = 0;
    const read = () =>
      near.read(key, [key], async () => {
        loads++;
        return cache.get(key);
      });
    await elsewhere.set(key, "1");
    /** Whether a read right after another is answered from memory. */
    const remembered = async () => {
      await read();
      const before = loads;
      await read();
      return loads === before;
    };
    await eventually("a read is remembered", remembered);

    await killConnection(name, role);
    // While the watch is down, a change elsewhere cannot be reported; it must still be seen.
    await elsewhere.set(key, "2");
    await eventually("the change made while the watch was down is read", async () => {
      return (await read()) === "2";
    });
    await eventually("reads are remembered again", remembered);
    await elsewhere.set(key, "3");
    await eventually("changes are reported again", async () => (await read()) === "3");
  });
}

test("near cache: reads its own writes before their change is reported", async (t) => {
  const memory = createMemoryCache();
  // Reports that arrive late, as they may from Redis on a connection of their own.
  const slow: Cache = {
    ...memory,
    watchKeys: (prefixes, onChange) =>
      memory.watchKeys(prefixes, (keys) => setTimeout(() => onChange(keys), 200)),
  };
  const near = await createNearCache({ cache: slow, prefixes: ["k:"] });
  t.after(() => near.close());
  const read = () => near.read("k:a", ["k:a"], () => memory.get("k:a"));
  await near.cache.set("k:a", "1");
  assert.equal(await read(), "1");
  await near.cache.set("k:a", "2");
  assert.equal(await read(), "2");
  await near.cache.del("k:b", "k:a");
  assert.equal(await read(), null);
});
