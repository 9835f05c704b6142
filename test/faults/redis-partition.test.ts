import assert from "node:assert/strict";
import { test } from "node:test";
import { createTestPostgres, eventually, needsServer } from "@atrium/kit/testing";
import { Redis } from "ioredis";
import { startTcpProxy } from "../gateway-tcp-proxy.js";
import { startOwnRedis } from "./fault-servers.js";
import { startMemoryUnderFault } from "./memory-under-fault.js";
import { retryWrite } from "./write-load.js";

/**
 * A network partition between the memory service and a Redis that keeps its data: the cached
 * window written before the partition is still in Redis afterwards, without the writes made
 * meanwhile. When Redis is reachable again that window must not be served: it is rebuilt from
 * PostgreSQL, in Redis too.
 */
test("the window written during a partition is rebuilt when Redis is reachable again", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const pg = await createTestPostgres();
  const redis = await startOwnRedis();
  const proxy = await startTcpProxy(new URL(redis.url));
  const memory = await startMemoryUnderFault({
    DATABASE_URL: pg.url,
    REDIS_URL: proxy.url.replace("http:", "redis:"),
  });
  const direct = new Redis(redis.url);
  // One hook, in order: the service stops while Redis is still there to say goodbye to.
  t.after(async () => {
    proxy.heal();
    await memory.service.stop();
    await direct.quit();
    await proxy.close();
    await redis.stop();
    await pg.drop();
  });

  const session = await memory.createSession();
  const sessionUrl = `${memory.rest}/api/v1/sessions/${session}`;
  const context = async () => {
    const res = await fetch(`${sessionUrl}/context?limit=50`, {
      signal: AbortSignal.timeout(5000),
    });
    assert.equal(res.status, 200);
    const body = (await res.json()) as { stm_events: { content: string }[] };
    return body.stm_events.map((e) => e.content);
  };
  const cachedWindow = async () => {
    const [key] = (await direct.keys("*:stm:*")).filter((k) => !k.endsWith(":warm"));
    return key ? (await direct.lrange(key, 0, -1)).map((e) => JSON.parse(e).content) : [];
  };

  for (let i = 0; i < 3; i++)
    assert.equal(await retryWrite(`${sessionUrl}/interactions`, `before-${i}`), 200);
  assert.equal((await context()).length, 6);
  assert.equal((await cachedWindow()).length, 6, "the window is cached in Redis");

  proxy.partition();
  await eventually("the service sees Redis gone", () =>
    memory
      .logs()
      .some((l) => l.msg === "cache: Redis unreachable; working without it and reconnecting"),
  );
  for (let i = 0; i < 3; i++)
    assert.equal(await retryWrite(`${sessionUrl}/interactions`, `during-${i}`), 200);
  assert.ok((await context()).includes("during-2"), "served from PostgreSQL meanwhile");
  assert.ok(!(await cachedWindow()).includes("during-0"), "Redis still holds the old window");

  proxy.heal();
  await eventually("the service sees Redis back", () =>
    memory.logs().some((l) => l.msg === "cache: Redis reachable again"),
  );
  const window = await context();
  for (const key of ["before-0", "during-0", "during-2"]) assert.ok(window.includes(key), key);
  assert.equal(window.length, 12);
  const rebuilt = await cachedWindow();
  assert.ok(rebuilt.includes("during-2"), "the window in Redis was rebuilt");
  assert.equal(rebuilt.length, 12);
});
