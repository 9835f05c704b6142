import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { memoryV1 } from "@atrium/api";
import { createPostgresSql } from "@atrium/kit";
import { eventually } from "@atrium/kit/testing";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { type OwnPostgres, startOwnPostgres } from "./fault-servers.js";
import { type MemoryUnderFault, startMemoryUnderFault, timedGet } from "./memory-under-fault.js";
import { retryWrite, startWriteLoad } from "./write-load.js";

/**
 * The service's PostgreSQL (a cluster of this test's own) is stopped with `-m immediate` for 2 s
 * under 50 writes/s, then started again. Writes meanwhile are refused 503 with Retry-After, never
 * 500 (gRPC: UNAVAILABLE with retry-after); health answers within a second; writes succeed again
 * without a restart; a client that retries each refused write with its idempotency key ends with
 * every write stored exactly once.
 */

/** StoreInteraction over gRPC: the code and `retry-after` metadata of its refusal. */
async function grpcStore(baseUrl: string, sessionId: string) {
  const client = createClient(memoryV1.MemoryService, createGrpcTransport({ baseUrl }));
  try {
    await client.storeInteraction({ sessionId, userMessage: "over grpc" });
    return { code: "OK" };
  } catch (error) {
    const e = ConnectError.from(error);
    return { code: Code[e.code], retryAfter: e.metadata.get("retry-after") };
  }
}

let pg: OwnPostgres | undefined;
let memory: MemoryUnderFault | undefined;
const dataDir = mkdtempSync(join(tmpdir(), "atrium-faults-data-"));

after(async () => {
  await memory?.service.stop();
  await pg?.destroy();
  rmSync(dataDir, { recursive: true, force: true });
});

test("PostgreSQL stopped (-m immediate) and started under write load", async () => {
  pg = await startOwnPostgres();
  memory = await startMemoryUnderFault({ DATABASE_URL: pg.url, ATRIUM_DATA_DIR: dataDir });
  const session = await memory.createSession();
  const url = `${memory.rest}/api/v1/sessions/${session}/interactions`;
  const load = startWriteLoad({ url, intervalMs: 20, prefix: "p" });

  await sleep(1000);
  const outageFrom = performance.now();
  await pg.stop();
  await sleep(300);
  const health = await timedGet(`${memory.rest}/health`);
  const grpcRefusal = await grpcStore(memory.service.urls.grpc ?? "", session);
  await sleep(1500);
  await pg.start();
  const outageTo = performance.now();
  await eventually(
    "writes succeed again",
    () => load.results.some((r) => r.startedAt > outageTo && r.status === 200),
    10_000,
  );
  await sleep(500);
  const results = await load.stop();

  const refused = results.filter((r) => r.status !== 200);
  assert.ok(refused.length > 20, `${refused.length} writes refused during the outage`);
  for (const r of refused) {
    assert.equal(r.status, 503, `${r.key} answered ${r.status}`);
    assert.equal(r.retryAfter, "1", `${r.key} carries Retry-After`);
  }
  // Writes in flight when the server died are refused too: a refused write must have been
  // unanswered at some moment of the outage (on a loaded machine a write can be in flight for
  // half a second, so a fixed window before the stop would be a guess).
  const early = refused.filter(
    (r) => r.startedAt + r.latencyMs < outageFrom || r.startedAt > outageTo + 5000,
  );
  assert.deepEqual(
    early.map((r) => `${r.key} at ${(r.startedAt - outageFrom).toFixed(0)} ms`),
    [],
    "only writes around the outage were refused",
  );
  assert.deepEqual(grpcRefusal, { code: "Unavailable", retryAfter: "1" });
  assert.equal(health.status, 200);
  assert.equal(health.body.status, "degraded");
  assert.ok(health.ms < 1000, `/health answered in ${health.ms.toFixed(0)} ms`);

  // The client retries what was refused, and, to prove retries are safe, some of what was not.
  const retried = [...refused, ...results.filter((r) => r.status === 200).slice(0, 20)];
  for (const r of retried) assert.equal(await retryWrite(url, r.key), 200, r.key);

  const check = await createPostgresSql({ url: pg.url, max: 1 });
  try {
    const { rows } = await check.query<{ content: string; n: number }>(
      "SELECT content, count(*)::int AS n FROM memory_events WHERE role = 'user' GROUP BY content",
    );
    const stored = new Map(rows.map((row) => [row.content, row.n]));
    for (const r of results) assert.equal(stored.get(r.key), 1, `${r.key} stored once`);
    assert.equal(stored.size, results.length);
  } finally {
    await check.close();
  }
});
