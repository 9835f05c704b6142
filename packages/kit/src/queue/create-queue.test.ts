import assert from "node:assert/strict";
import { test } from "node:test";
import { needsServer, redisUrl } from "../testing/servers.js";
import { createQueue } from "./create-queue.js";

test("createQueue is in-process without a Redis URL", async () => {
  const queue = createQueue();
  assert.equal(queue.kind, "memory");
  await queue.close();
});

test("createQueue uses BullMQ when given a URL", async (t) => {
  if (!(await needsServer(t, "redis"))) return;
  const queue = createQueue({ redisUrl: redisUrl() });
  assert.equal(queue.kind, "bullmq");
  await queue.close();
});
