import assert from "node:assert/strict";
import { test } from "node:test";
import { needsServer, redisUrl } from "../testing/servers.js";
import { createCache } from "./create-cache.js";

test("createCache is in-process without a Redis URL", async () => {
  const cache = createCache();
  assert.equal(cache.kind, "memory");
  await cache.close();
});

test("createCache uses Redis when given a URL", async (t) => {
  if (!(await needsServer(t, "redis"))) return;
  const cache = createCache({ redisUrl: redisUrl() });
  assert.equal(cache.kind, "redis");
  await cache.ping();
  await cache.close();
});
