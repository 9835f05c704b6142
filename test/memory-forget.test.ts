import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { createCache, createSql } from "@atrium/kit";
import { createTestPostgres, needsServer, redisUrl, type TestPostgres } from "@atrium/kit/testing";
import { CANARY, databaseHits, runCanary } from "./memory-forget.js";
import { startTestService, type TestService, type Transport } from "./memory-service-harness.js";

const restOf = (s: TestService) => s.transports.find((t) => t.name === "rest") as Transport;

describe("Forget leaves nothing behind", () => {
  const cleanups: (() => Promise<void>)[] = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });
  const blobDir = () => {
    const dir = mkdtempSync(join(tmpdir(), "atrium-forget-blobs-"));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    return dir;
  };

  test("PGlite: the canary is found through no read path and in no store", async () => {
    const blobs = blobDir();
    const svc = await startTestService({ BLOB_STORE_URL: `file://${blobs}` });
    cleanups.push(async () => rmSync(svc.dataDir, { recursive: true, force: true }));
    try {
      await runCanary({
        instances: [restOf(svc)],
        restUrls: [svc.service.urls.rest],
        blobDir: blobs,
        tenant: `forget-${randomBytes(4).toString("hex")}`,
      });
    } finally {
      await svc.service.stop();
    }
    // The instance owns its PGlite directory: the dump reads it once the instance stopped.
    const sql = await createSql({ dataDir: svc.dataDir, name: "memory" });
    try {
      assert.deepEqual(await databaseHits(sql, CANARY), []);
    } finally {
      await sql.close();
    }
  });

  test("PostgreSQL + Redis, two instances: the canary is found nowhere", async (c) => {
    if (!(await needsServer(c, "postgres")) || !(await needsServer(c, "redis"))) return;
    const pg: TestPostgres = await createTestPostgres();
    cleanups.push(() => pg.drop());
    const blobs = blobDir();
    const env = { DATABASE_URL: pg.url, REDIS_URL: redisUrl(2), BLOB_STORE_URL: `file://${blobs}` };
    const services = [await startTestService(env), await startTestService(env)];
    for (const s of services) cleanups.push(() => s.stop());
    const cache = createCache({ redisUrl: redisUrl(2) });
    cleanups.push(() => cache.close());
    await runCanary({
      instances: services.map(restOf),
      restUrls: services.map((s) => s.service.urls.rest),
      sql: pg.sql,
      blobDir: blobs,
      cache,
      tenant: `forget-${randomBytes(4).toString("hex")}`,
    });
  });
});
