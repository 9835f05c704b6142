import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import {
  createTestPostgres,
  needsServer,
  redisUrl,
  serverAvailable,
  type TestPostgres,
} from "@atrium/kit/testing";
import { startTestService, type TestService, type Transport } from "./memory-service-harness.js";
import { quotesFact, runReadYourWrites } from "./read-your-writes.js";

/**
 * Read-your-writes across instances: a fact acknowledged by one memory instance is found, in
 * other words, by the next search on another, and that search returns what the same search
 * returns once the chain checks ran: the same results, quoting the same turns, in the same order,
 * with the same scores. PostgreSQL + Redis, two instances.
 */
describe("read-your-writes on PostgreSQL + Redis, two instances", () => {
  let pg: TestPostgres | undefined;
  const services: TestService[] = [];

  before(async () => {
    if (!(await serverAvailable("postgres")) || !(await serverAvailable("redis"))) return;
    pg = await createTestPostgres();
    for (let i = 0; i < 2; i++) {
      services.push(await startTestService({ DATABASE_URL: pg.url, REDIS_URL: redisUrl(1) }));
    }
  });
  after(async () => {
    for (const s of services) await s.stop();
    await pg?.drop();
  });

  test("100 facts stored on one instance and asked about at once on the other", async (c) => {
    if (!(await needsServer(c, "postgres")) || !(await needsServer(c, "redis"))) return;
    const [writer, reader] = services.map(
      (s) => s.transports.find((t) => t.name === "rest") as Transport,
    );
    const outcomes = await runReadYourWrites({
      writer,
      reader,
      sql: (pg as TestPostgres).sql,
      tenant: `ryw-${randomBytes(4).toString("hex")}`,
      pairs: 100,
    });
    for (const o of outcomes) {
      assert.ok(quotesFact(o.atOnce, o.pair), `found at once: ${o.pair.question}`);
      assert.ok(quotesFact(o.later, o.pair), `found later: ${o.pair.question}`);
      // The chain check labels a result with its page; what comes back does not move.
      assert.deepEqual(
        o.resultsAtOnce,
        o.resultsLater,
        `the same results at once and later: ${o.pair.question}`,
      );
      assert.ok(o.contextAtOnce, `GetContext quotes it at once: ${o.pair.question}`);
      assert.ok(o.contextLater, `GetContext quotes it later: ${o.pair.question}`);
    }
  });
});
