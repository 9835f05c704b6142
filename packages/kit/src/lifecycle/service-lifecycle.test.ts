import assert from "node:assert/strict";
import { test } from "node:test";
import { createLogger } from "../logger/logger.js";
import { createResourceStack, startService } from "./service-lifecycle.js";

const silent = createLogger({ name: "test", level: "silent" });

test("closes newest first, once, and goes on past a failing close", async () => {
  const closed: string[] = [];
  const resources = createResourceStack(silent);
  resources.defer(() => closed.push("database"));
  resources.defer(async () => {
    closed.push("cache");
    throw new Error("cache stuck");
  });
  resources.defer(() => closed.push("server"));
  const first = resources.close();
  assert.equal(resources.close(), first);
  await first;
  await resources.close();
  assert.deepEqual(closed, ["server", "cache", "database"]);
});

test("a start that fails closes what it opened and rethrows", async () => {
  const closed: string[] = [];
  await assert.rejects(
    startService(silent, async (resources) => {
      resources.defer(() => closed.push("database"));
      throw new Error("port in use");
    }),
    /port in use/,
  );
  assert.deepEqual(closed, ["database"]);
});
