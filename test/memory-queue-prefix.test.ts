import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, test } from "node:test";
import {
  createTestPostgres,
  eventually,
  needsServer,
  redisUrl,
  serverAvailable,
  type TestPostgres,
} from "@atrium/kit/testing";
import {
  ok,
  startTestService,
  type TestService,
  type Transport,
} from "./memory-service-harness.js";

/**
 * Two memory deployments (each its own PostgreSQL schema) on one Redis database: each checks
 * its own chains, and reads its own cached STM windows and recent pages. With one queue for
 * both, each took the other's chain-check jobs for scopes its schema does not hold, and those
 * messages stayed unchecked; with one cache key space, a user of the same name on both read
 * the other deployment's turns in GetContext.
 */
const databases: TestPostgres[] = [];
const services: TestService[] = [];

before(async () => {
  if (!(await serverAvailable("postgres")) || !(await serverAvailable("redis"))) return;
  for (let i = 0; i < 2; i++) {
    const pg = await createTestPostgres();
    databases.push(pg);
    // A Redis database of its own, shared by the two deployments and nothing else.
    services.push(await startTestService({ DATABASE_URL: pg.url, REDIS_URL: redisUrl(5) }));
  }
});
after(async () => {
  for (const service of services) await service.stop();
  for (const pg of databases) await pg.drop();
});

test("two deployments on one Redis each check their own chains", async (c) => {
  if (!(await needsServer(c, "postgres")) || !(await needsServer(c, "redis"))) return;
  const tenant = `prefix-${randomBytes(4).toString("hex")}`;
  const turns = 12;
  await Promise.all(
    services.map(async (service) => {
      const rest = service.transports.find((t) => t.name === "rest") as Transport;
      for (let user = 0; user < turns; user++) {
        const { session_id } = await ok(rest, "createSession", {
          tenant_id: tenant,
          user_id: `u${user}`,
          agent_id: "a1",
        });
        await ok(rest, "storeInteraction", {
          session_id,
          user_message: `Which espresso grinder suits light roasts, question ${user}?`,
          agent_response: "A flat burr grinder.",
        });
      }
    }),
  );
  for (const [i, pg] of databases.entries()) {
    await eventually(
      `deployment ${i} checked every chain`,
      async () => {
        const { rows } = await pg.sql.query<{ pending: string; events: string }>(
          `SELECT count(*) FILTER (WHERE chain_state = 'pending') AS pending, count(*) AS events
         FROM memory_events WHERE tenant_id = $1`,
          [tenant],
        );
        return Number(rows[0].pending) === 0 && Number(rows[0].events) === turns * 2;
      },
      30_000,
    );
  }
});

test("two deployments on one Redis keep their cached windows and pages apart", async (c) => {
  if (!(await needsServer(c, "postgres")) || !(await needsServer(c, "redis"))) return;
  // The same tenant, user and agent names on both: one scope key, were it not for the prefix.
  const scope = {
    tenant_id: `cache-${randomBytes(4).toString("hex")}`,
    user_id: "u",
    agent_id: "a",
  };
  const sessions = await Promise.all(
    services.map(async (service, i) => {
      const rest = service.transports.find((t) => t.name === "rest") as Transport;
      const { session_id } = await ok(rest, "createSession", scope);
      // A read first, so that both windows and pages are cached before the writes.
      await ok(rest, "getContext", { session_id });
      await ok(rest, "storeInteraction", {
        session_id,
        user_message: `Only deployment ${i} was told about grinder ${i}.`,
        agent_response: `Noted for deployment ${i}.`,
      });
      return { rest, session_id };
    }),
  );
  for (const [i, pg] of databases.entries()) {
    await eventually(
      `deployment ${i} checked its chain`,
      async () => {
        const { rows } = await pg.sql.query<{ pending: string }>(
          "SELECT count(*) AS pending FROM memory_events WHERE tenant_id = $1 AND chain_state = 'pending'",
          [scope.tenant_id],
        );
        return Number(rows[0].pending) === 0;
      },
      30_000,
    );
  }
  for (const [i, { rest, session_id }] of sessions.entries()) {
    const context = await ok(rest, "getContext", { session_id });
    assert.deepEqual(
      context.stm_events.map((e: { content: string }) => e.content),
      [`Only deployment ${i} was told about grinder ${i}.`, `Noted for deployment ${i}.`],
      `deployment ${i}'s STM window`,
    );
    // The recent pages: the one chain of this deployment's own turn.
    const pages = context.relevant_pages as { summary: string }[];
    assert.equal(pages.length, 1, `deployment ${i}'s pages`);
    assert.doesNotMatch(JSON.stringify(pages), new RegExp(`deployment ${1 - i}`));
  }
});
