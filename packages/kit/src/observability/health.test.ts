import assert from "node:assert/strict";
import { test } from "node:test";
import { createLogger } from "../logger/logger.js";
import { createHealthReporter } from "./health.js";

const logger = createLogger({ name: "test", level: "silent" });

test("healthy when every check passes", async () => {
  const report = await createHealthReporter({
    service: "memory",
    checks: { cache: async () => {} },
    logger,
  })();
  assert.equal(report.status, "healthy");
  assert.equal(report.service, "memory");
  assert.deepEqual(report.checks, { cache: "ok" });
  assert.ok(!Number.isNaN(Date.parse(report.timestamp)));
});

test("degraded when a check fails or hangs, without the error text", async () => {
  const report = await createHealthReporter({
    service: "memory",
    checks: {
      cache: async () => {},
      database: async () => {
        throw new Error("password authentication failed for user app");
      },
      blob: () => new Promise<void>(() => {}),
    },
    logger,
    checkTimeoutMs: 20,
  })();
  assert.equal(report.status, "degraded");
  assert.deepEqual(report.checks, { cache: "ok", database: "failing", blob: "failing" });
  assert.ok(!JSON.stringify(report).includes("password"));
});
