import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { createCache } from "@atrium/kit";
import {
  createTestPostgres,
  eventually,
  needsServer,
  redisUrl,
  serverAvailable,
  type TestPostgres,
} from "@atrium/kit/testing";
import {
  type Json,
  ok,
  startTestService,
  type TestService,
  type Transport,
} from "./memory-service-harness.js";

/**
 * The same service on the production adapters: PostgreSQL (no pgvector here, so the exact cosine
 * path) and Redis for the cache window and the BullMQ queue. Includes what only a shared cache
 * can show: a flushed window is rebuilt from the durable store.
 */
describe("memory service on PostgreSQL + Redis", () => {
  let pg: TestPostgres | undefined;
  let svc: TestService | undefined;
  const run = randomBytes(4).toString("hex");
  // The deployment's Redis prefix, named so the test can read the cached window itself.
  const redisPrefix = `atrium-test-${run}`;

  before(async () => {
    // Each test reports the skip (or, with CI=true, the failure) through needsServer.
    if (!(await serverAvailable("postgres")) || !(await serverAvailable("redis"))) return;
    pg = await createTestPostgres();
    svc = await startTestService({
      DATABASE_URL: pg.url,
      REDIS_URL: redisUrl(),
      MEMORY_REDIS_PREFIX: redisPrefix,
    });
  });
  after(async () => {
    await svc?.stop();
    await pg?.drop();
  });

  for (const name of ["rest", "grpc"] as const) {
    const tenant = `pg-${run}-${name}`;
    const t = () => svc?.transports.find((x) => x.name === name) as Transport;

    test(`${name}: store, read back after the cache lost the window, search`, async (c) => {
      if (!(await needsServer(c, "postgres")) || !(await needsServer(c, "redis"))) return;
      const { session_id } = await ok(t(), "createSession", {
        tenant_id: tenant,
        user_id: "u1",
        agent_id: "a1",
      });
      await ok(t(), "storeInteraction", {
        session_id,
        user_message: "Which espresso grinder should I buy for light roasts?",
        agent_response: "A flat burr espresso grinder suits light roasts.",
      });
      await ok(t(), "storeEvent", {
        session_id,
        type: "thought",
        role: "agent",
        content: "compare grinders",
      });

      const cache = createCache({ redisUrl: redisUrl() });
      try {
        const key = `${redisPrefix}:stm:${tenant}:u1:a1`;
        assert.equal(await cache.llen(key), 3);
        await cache.del(key, `${key}:warm`);
        // The service hears of a change made by another client when Redis's tracking report
        // reaches it (its near cache may answer once more before that).
        await eventually("the window is refilled from PostgreSQL", async () => {
          const context = await ok(t(), "getContext", { session_id });
          assert.deepEqual(
            context.stm_events.map((e: Json) => e.role),
            ["user", "agent", "agent"],
          );
          return (await cache.llen(key)) === 3;
        });
      } finally {
        await cache.close();
      }

      let results: Json[] = [];
      // A message is found by its words at once; its dialogue page once the chain check ran.
      await eventually("the chain is searchable", async () => {
        results = (await ok(t(), "searchMemory", { session_id, query: "espresso grinder" }))
          .results;
        return results[0]?.source_type === "dialogue_page";
      });
      assert.equal(results[0].source_type, "dialogue_page");
      assert.match(results[0].content, /grinder/);
      assert.ok(results[0].similarity_score > 0.3);
      const health = await ok(t(), "healthCheck");
      assert.deepEqual(health, { ...health, status: "healthy" });
    });
  }

  test("two instances on one database and Redis: every message is chained exactly once", async (c) => {
    if (!(await needsServer(c, "postgres")) || !(await needsServer(c, "redis"))) return;
    const second = await startTestService({
      DATABASE_URL: (pg as TestPostgres).url,
      REDIS_URL: redisUrl(),
      MEMORY_REDIS_PREFIX: redisPrefix,
    });
    c.after(() => second.stop());
    const tenant = `pg-${run}-two`;
    const instances = [svc as TestService, second].map(
      (s) => s.transports.find((x) => x.name === "rest") as Transport,
    );
    const { session_id } = await ok(instances[0], "createSession", {
      tenant_id: tenant,
      user_id: "u1",
      agent_id: "a1",
    });
    // Waves through alternating instances: some land while a check of the scope is due or
    // running on one instance and not the other, which is what the skip rules must survive.
    const turns = 60;
    for (let wave = 0; wave < 6; wave++) {
      await Promise.all(
        Array.from({ length: turns / 6 }, (_, i) =>
          ok(instances[(wave + i) % 2], "storeInteraction", {
            session_id,
            user_message: `Wave ${wave} question ${i}: ${wave % 2 ? "sourdough starters" : "espresso grinders"}?`,
            agent_response: `Answer ${wave}.${i}.`,
          }),
        ),
      );
      await new Promise((resolve) => setTimeout(resolve, 60 * wave));
    }
    const sql = (pg as TestPostgres).sql;
    await eventually("every message went through the chain check", async () => {
      const { rows } = await sql.query<{ n: string }>(
        "SELECT count(*) AS n FROM memory_events WHERE tenant_id = $1 AND chain_state = 'pending'",
        [tenant],
      );
      return Number(rows[0].n) === 0;
    });
    const { rows } = await sql.query<{ total: string; distinct_ids: string }>(
      `SELECT count(*) AS total, count(DISTINCT id) AS distinct_ids
       FROM (SELECT unnest(event_ids) AS id FROM memory_chains WHERE tenant_id = $1) AS chained`,
      [tenant],
    );
    assert.equal(Number(rows[0].total), turns * 2, "every message in a chain");
    assert.equal(Number(rows[0].distinct_ids), turns * 2, "no message in two chains");
  });

  test("a burst of interactions on one scope: every event in the window, every message chained", async (c) => {
    if (!(await needsServer(c, "postgres")) || !(await needsServer(c, "redis"))) return;
    const tenant = `pg-${run}-burst`;
    const rest = svc?.transports.find((x) => x.name === "rest") as Transport;
    const { session_id } = await ok(rest, "createSession", {
      tenant_id: tenant,
      user_id: "u1",
      agent_id: "a1",
    });
    // Concurrent calls share chain-check enqueues; none may leave its message unchecked.
    const turns = 40;
    await Promise.all(
      Array.from({ length: turns }, (_, i) =>
        ok(rest, "storeInteraction", {
          session_id,
          user_message: `Question ${i} about espresso grinders for light roasts?`,
          agent_response: `Answer ${i}: a flat burr grinder.`,
        }),
      ),
    );
    const cache = createCache({ redisUrl: redisUrl() });
    try {
      assert.equal(await cache.llen(`${redisPrefix}:stm:${tenant}:u1:a1`), turns * 2);
    } finally {
      await cache.close();
    }
    await eventually("every message went through the chain check", async () => {
      const { rows } = await (pg as TestPostgres).sql.query<{ n: string }>(
        "SELECT count(*) AS n FROM memory_events WHERE tenant_id = $1 AND chain_state = 'pending'",
        [tenant],
      );
      return Number(rows[0].n) === 0;
    });
  });
});
