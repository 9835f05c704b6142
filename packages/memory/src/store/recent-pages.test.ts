import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type Cache, createCache, createPgliteSql, type Sql } from "@atrium/kit";
import type { Scope } from "../domain.js";
import { testChain } from "../testing/chain-record.js";
import { type ChainRecord, chainStore } from "./chains.js";
import { migrateMemory } from "./migrate.js";
import { createRecentPages } from "./recent-pages.js";

let sql: Sql;
let cache: Cache;
let scopes = 0;
before(async () => {
  sql = await createPgliteSql();
  await migrateMemory(sql);
  cache = createCache({});
});
after(async () => {
  await cache.close();
  await sql.close();
});

const newScope = (): Scope => ({ tenantId: "t", userId: `u${++scopes}`, agentId: "a" });

async function saveChain(scope: Scope, topic: string, minute: number): Promise<ChainRecord> {
  const chain = testChain(scope, {
    topic,
    summary: `about ${topic}`,
    content: `User: ${topic}`,
    lastEventAt: new Date(Date.UTC(2026, 0, 1, 10, minute)),
  });
  await chainStore.save(sql, chain);
  return chain;
}

const topics = (chains: ChainRecord[]) => chains.map((c) => c.topic);

describe("recent pages cache", () => {
  test("serves the scope's newest chains from the cache until the scope is invalidated", async () => {
    const pages = createRecentPages({ sql, cache });
    const scope = newScope();
    await saveChain(scope, "espresso", 1);
    const gone = await saveChain(scope, "grinders", 2);
    const first = await pages.read(scope, 5);
    assert.deepEqual(topics(first), ["grinders", "espresso"]);
    assert.ok(first[0].lastEventAt instanceof Date);

    // Changed behind the cache's back: the cached list is still what a read gets.
    await chainStore.remove(sql, gone.id);
    await saveChain(scope, "milk", 3);
    const cached = await pages.read(scope, 5);
    assert.deepEqual(topics(cached), ["grinders", "espresso"]);
    assert.deepEqual(cached[0].lastEventAt, first[0].lastEventAt);

    await pages.invalidate([scope]);
    assert.deepEqual(topics(await pages.read(scope, 5)), ["milk", "espresso"]);
  });

  test("of chains whose newest messages share one time, the one that took a message last comes first", async () => {
    const pages = createRecentPages({ sql, cache });
    const scope = newScope();
    const at = new Date(Date.UTC(2026, 0, 1, 10, 0));
    // Ids in the opposite order to saving, so that an order by id alone would put the oldest first.
    for (const [topic, id] of [
      ["morning", "00000000-0000-4000-8000-000000000001"],
      ["noon", "80000000-0000-4000-8000-000000000001"],
      ["evening", "ffffffff-0000-4000-8000-000000000001"],
    ]) {
      await chainStore.save(
        sql,
        testChain(scope, { id, topic, summary: topic, content: `User: ${topic}`, lastEventAt: at }),
      );
    }
    assert.deepEqual(topics(await pages.read(scope, 2)), ["evening", "noon"]);
  });

  test("invalidating one scope leaves another scope's cached list in use", async () => {
    const pages = createRecentPages({ sql, cache });
    const [a, b] = [newScope(), newScope()];
    await saveChain(a, "a1", 1);
    await saveChain(b, "b1", 1);
    await pages.read(a, 5);
    await pages.read(b, 5);
    await saveChain(a, "a2", 2);
    await saveChain(b, "b2", 2);
    await pages.invalidate([a]);
    assert.deepEqual(topics(await pages.read(a, 5)), ["a2", "a1"]);
    assert.deepEqual(topics(await pages.read(b, 5)), ["b1"]);
  });

  test("a read that raced a write never leaves its stale list in use", async () => {
    const scope = newScope();
    await saveChain(scope, "before", 1);
    // The database answers the read, then a writer commits and invalidates before the reader
    // stores what it read.
    let raced = false;
    const racingSql = {
      ...sql,
      query: async (...args: Parameters<Sql["query"]>) => {
        const result = await sql.query(...args);
        if (!raced) {
          raced = true;
          await saveChain(scope, "after", 2);
          await pages.invalidate([scope]);
        }
        return result;
      },
    } as Sql;
    const pages = createRecentPages({ sql: racingSql, cache });
    assert.deepEqual(topics(await pages.read(scope, 5)), ["before"]);
    assert.deepEqual(topics(await pages.read(scope, 5)), ["after", "before"]);
  });

  test("reads come from the database when the cache fails", async () => {
    const errors: string[] = [];
    const broken = {
      get: async () => {
        throw new Error("connect ECONNREFUSED");
      },
    } as unknown as Cache;
    const pages = createRecentPages({
      sql,
      cache: broken,
      onCacheError: (_error, operation) => errors.push(operation),
    });
    const scope = newScope();
    await saveChain(scope, "offline", 1);
    assert.deepEqual(topics(await pages.read(scope, 5)), ["offline"]);
    assert.deepEqual(errors, ["read pages"]);
  });
});
