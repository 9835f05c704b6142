import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { queueContract } from "../testing/queue-contract.js";
import { needsServer, redisUrl } from "../testing/servers.js";
import { createBullmqQueue } from "./bullmq-queue.js";

/** Removes every key under a test's own prefix. */
async function deleteKeys(prefix: string): Promise<void> {
  const redis = new Redis(redisUrl());
  try {
    for await (const keys of redis.scanStream({ match: `${prefix}:*`, count: 500 })) {
      if ((keys as string[]).length > 0) await redis.del(...(keys as string[]));
    }
  } finally {
    await redis.quit();
  }
}

queueContract("bullmq", async (t) => {
  if (!(await needsServer(t, "redis"))) return undefined;
  const prefix = `{atrium-test-${randomUUID()}}`;
  const queue = createBullmqQueue({ redisUrl: redisUrl(), prefix, drainPollMs: 20 });
  t.after(async () => {
    await queue.close();
    await deleteKeys(prefix);
  });
  return queue;
});
