import assert from "node:assert/strict";
import { Writable } from "node:stream";
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

test("a failing check is logged when it starts failing and when it recovers, not per probe", async () => {
  const lines: { msg: string; check: string }[] = [];
  const recording = createLogger({
    name: "test",
    level: "info",
    destination: new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    }),
  });
  let up = false;
  const probe = createHealthReporter({
    service: "memory",
    checks: {
      cache: async () => {
        if (!up) throw new Error("down");
      },
    },
    logger: recording,
  });
  for (let i = 0; i < 5; i++) assert.equal((await probe()).status, "degraded");
  up = true;
  for (let i = 0; i < 3; i++) assert.equal((await probe()).status, "healthy");
  up = false;
  await probe();
  assert.deepEqual(
    lines.map((l) => [l.msg, l.check]),
    [
      ["health check failing", "cache"],
      ["health check passing again", "cache"],
      ["health check failing", "cache"],
    ],
  );
});
