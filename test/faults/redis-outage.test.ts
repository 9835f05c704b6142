import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { createTestPostgres, eventually, needsServer } from "@atrium/kit/testing";
import { percentile, startOwnRedis } from "./fault-servers.js";
import { startMemoryUnderFault, timedGet } from "./memory-under-fault.js";
import { retryWrite, startWriteLoad } from "./write-load.js";

/**
 * Redis is killed (SIGKILL) for 5 s at 50 writes/s and for 40 s at 10 writes/s. Writes are
 * served from PostgreSQL meanwhile, at normal latency; health and GetContext answer; when a
 * fresh Redis comes up on the same port the service uses it again without a restart.
 */
const cleanups: (() => Promise<unknown>)[] = [];
const consoleErrors: string[] = [];
const originalConsoleError = console.error;

before(async () => {
  console.error = (...args: unknown[]) => {
    consoleErrors.push(args.map(String).join(" "));
  };
});

after(async () => {
  console.error = originalConsoleError;
  for (const cleanup of cleanups) await cleanup();
});

interface Outage {
  /** How long Redis stays dead. */
  ms: number;
  /** One write every so many ms. */
  writeEveryMs: number;
}

/**
 * Kills Redis under write load for the outage's length, brings a fresh one up, and checks what
 * the issue asks: every write acknowledged, fast, once; health and GetContext answering; the
 * service back on Redis without a restart; no chain check lost; one log line per state change.
 */
async function outageUnderLoad(outage: Outage): Promise<void> {
  const pg = await createTestPostgres();
  const redis = await startOwnRedis();
  const memory = await startMemoryUnderFault({ DATABASE_URL: pg.url, REDIS_URL: redis.url });
  cleanups.push(
    () => memory.service.stop(),
    () => redis.stop(),
    () => pg.drop(),
  );
  const session = await memory.createSession();
  const sessionUrl = `${memory.rest}/api/v1/sessions/${session}`;
  const load = startWriteLoad({
    url: `${sessionUrl}/interactions`,
    intervalMs: outage.writeEveryMs,
    prefix: `w${outage.ms}-`,
  });

  await sleep(1000);
  await redis.kill();
  const outageFrom = performance.now();
  await sleep(300);
  const health = await timedGet(`${memory.rest}/health`);
  const apiHealth = await timedGet(`${memory.rest}/api/v1/health`);
  const context = await timedGet(`${sessionUrl}/context?limit=5`);
  await sleep(outage.ms - 300);
  const outageTo = performance.now();
  // The load ends with the outage, so that only the sweep can queue the checks missed meanwhile.
  const results = await load.stop();
  await redis.start();
  await eventually("the service reports Redis back", () =>
    ["cache", "queue"].every((c) =>
      memory.logs().some((l) => l.msg === `${c}: Redis reachable again`),
    ),
  );

  // Every write succeeded, also during the outage, and fast.
  const failures = results.filter((r) => r.status !== 200);
  assert.deepEqual(failures, [], "every write is acknowledged");
  const during = results.filter((r) => r.startedAt >= outageFrom && r.startedAt < outageTo);
  // The load ran through the outage; on a starved machine its timer fires late, so the count
  // is a floor, not the rate (the rate is not what this test is about).
  const expected = outage.ms / outage.writeEveryMs;
  assert.ok(during.length >= expected * 0.25, `${during.length} writes during the outage`);
  const p99 = percentile(
    during.map((r) => r.latencyMs),
    99,
  );
  // 100 ms, the bound the issue sets; on a machine so busy that writes were slower than that
  // before Redis went away, the bound is what they were then (plus half): the outage must cost
  // nothing, where it used to cost seconds.
  const baseline = percentile(
    results.filter((r) => r.startedAt < outageFrom).map((r) => r.latencyMs),
    99,
  );
  const bound = Math.max(100, baseline * 1.5);
  assert.ok(
    p99 < bound,
    `p99 of writes during the outage: ${p99.toFixed(1)} ms; before it: ${baseline.toFixed(1)} ms`,
  );

  // Health and GetContext answered during the outage.
  for (const [name, probe] of [
    ["/health", health],
    ["/api/v1/health", apiHealth],
  ] as const) {
    assert.equal(probe.status, 200, name);
    assert.equal(probe.body.status, "degraded", name);
    assert.ok(probe.ms < 1000, `${name} answered in ${probe.ms.toFixed(0)} ms`);
  }
  assert.equal(context.status, 200);
  assert.equal(context.body.stm_events.length, 5);

  // A client retrying writes of the outage (its answers lost, say) stores nothing twice.
  for (const r of during.slice(0, 20)) {
    assert.equal(await retryWrite(`${sessionUrl}/interactions`, r.key), 200);
  }

  // Every acknowledged write is stored exactly once.
  const { rows } = await pg.sql.query<{ content: string; n: number }>(
    "SELECT content, count(*)::int AS n FROM memory_events WHERE role = 'user' GROUP BY content",
  );
  const stored = new Map(rows.map((r) => [r.content, r.n]));
  for (const r of results) assert.equal(stored.get(r.key), 1, r.key);
  assert.equal(stored.size, results.length);

  // Recovered without a restart: the window is rebuilt from PostgreSQL into the new Redis.
  const last = results[results.length - 1].key;
  const after = await timedGet(`${sessionUrl}/context?limit=4`);
  assert.equal(after.status, 200);
  assert.ok(
    after.body.stm_events.some((e: { content: string }) => e.content === last),
    "the newest write is in the context",
  );
  const cached = (await fetch(`${memory.rest}/api/v1/health`).then((r) => r.json())) as {
    status: string;
  };
  assert.equal(cached.status, "healthy");

  // No message is left without its chain check: the check running when Redis went away reads
  // on from PostgreSQL, and what it missed is queued by the sweep when the queue is back.
  await eventually(
    "every message went through its chain check",
    async () => {
      const { rows: left } = await pg.sql.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM memory_events WHERE chain_state = 'pending'",
      );
      return left[0].n === 0;
    },
    60_000,
  );

  // One line per state change and component; ioredis printed nothing.
  const downs = memory.logs().filter((l) => /Redis unreachable/.test(l.msg));
  assert.deepEqual(downs.map((l) => l.msg).sort(), [
    "cache: Redis unreachable; working without it and reconnecting",
    "queue: Redis unreachable; working without it and reconnecting",
  ]);
  assert.deepEqual(
    consoleErrors.filter((l) => l.includes("ioredis")),
    [],
    "no [ioredis] Unhandled error event",
  );
}

test("kill -9 of Redis for 5 s under 50 writes/s", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  await outageUnderLoad({ ms: 5000, writeEveryMs: 20 });
});

test("kill -9 of Redis for 40 s under 10 writes/s", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  await outageUnderLoad({ ms: 40_000, writeEveryMs: 100 });
});

test("started with Redis unreachable: one line per component, then quiet; writes and health work", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const schema = await createTestPostgres();
  t.after(() => schema.drop());
  const deadRedis = await startOwnRedis();
  await deadRedis.kill();
  const service = await startMemoryUnderFault({
    DATABASE_URL: schema.url,
    REDIS_URL: deadRedis.url,
  });
  t.after(() => service.service.stop());
  const session = await service.createSession();
  const stored = await retryWrite(`${service.rest}/api/v1/sessions/${session}/interactions`, "s-1");
  assert.equal(stored, 200);
  const health = await timedGet(`${service.rest}/health`);
  assert.equal(health.body.status, "degraded");
  assert.ok(health.ms < 1000, `/health answered in ${health.ms.toFixed(0)} ms`);
  // ioredis retries every few hundred ms meanwhile.
  await sleep(2500);
  // A second probe of the same outage logs nothing new: one line per state change.
  assert.equal((await timedGet(`${service.rest}/health`)).body.status, "degraded");
  const warnings = service.logs().filter((l) => l.level >= 40);
  assert.deepEqual(
    warnings.map((l) => l.msg).sort(),
    [
      "cache: Redis unreachable; working without it and reconnecting",
      "health check failing",
      "queue: Redis unreachable; working without it and reconnecting",
    ].sort(),
  );
  assert.deepEqual(
    consoleErrors.filter((l) => l.includes("ioredis")),
    [],
  );
});
