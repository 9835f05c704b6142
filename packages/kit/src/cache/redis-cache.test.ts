import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import { cacheContract } from "../testing/cache-contract.js";
import { eventually } from "../testing/eventually.js";
import { killRedisConnection } from "../testing/redis-connections.js";
import { needsServer, redisUrl } from "../testing/servers.js";
import { createRedisCache } from "./redis-cache.js";

cacheContract("redis", async (t, onHandlerError) => {
  if (!(await needsServer(t, "redis"))) return undefined;
  return createRedisCache({ url: redisUrl(), onHandlerError });
});

/** A plain connection for looking at the server from outside the adapter. */
function inspector(t: { after(fn: () => Promise<unknown>): void }): Redis {
  const redis = new Redis(redisUrl());
  t.after(() => redis.quit());
  return redis;
}

async function numberOfSubscriptions(redis: Redis, channel: string): Promise<number> {
  const [, count] = (await redis.pubsub("NUMSUB", channel)) as [string, number];
  return Number(count);
}

test("local handlers of a channel share one Redis subscription, dropped with the last", async (t) => {
  if (!(await needsServer(t, "redis"))) return;
  const cache = createRedisCache({ url: redisUrl() });
  t.after(() => cache.close());
  const redis = inspector(t);
  const channel = `atrium-test:${randomUUID()}`;
  const unsubscribeA = await cache.subscribe(channel, () => undefined);
  const unsubscribeB = await cache.subscribe(channel, () => undefined);
  assert.equal(await numberOfSubscriptions(redis, channel), 1);
  await unsubscribeA();
  assert.equal(await numberOfSubscriptions(redis, channel), 1);
  await unsubscribeB();
  assert.equal(await numberOfSubscriptions(redis, channel), 0);
});

test("subscriptions survive the subscriber connection being killed", async (t) => {
  if (!(await needsServer(t, "redis"))) return;
  const connectionName = `atrium-test-${randomUUID()}`;
  const cache = createRedisCache({ url: redisUrl(), connectionName });
  t.after(() => cache.close());
  const channel = `atrium-test:${randomUUID()}`;
  const received: string[] = [];
  const interruptions: Error[] = [];
  const unsubscribe = await cache.subscribe(channel, (message) => received.push(message), {
    onInterrupted: (error) => interruptions.push(error),
  });

  await killRedisConnection(`${connectionName}:subscriber`);

  await eventually("a message published after the reconnect arrived", async () => {
    await cache.publish(channel, "after reconnect");
    return received.length > 0;
  });
  // What was published while it was down is lost to pub/sub: the subscriber was told, once.
  assert.equal(interruptions.length, 1);
  assert.equal(cache.subscriberCount(), 1);
  await unsubscribe();
});

test("a subscription made while the connection is still starting delivers", async (t) => {
  if (!(await needsServer(t, "redis"))) return;
  // Subscribing at varying moments of the connection handshake: with ioredis' ready check on
  // the pub/sub connection a few of these silently never delivered.
  for (let attempt = 0; attempt < 60; attempt++) {
    const cache = createRedisCache({ url: redisUrl() });
    const channel = `fresh:${randomUUID()}`;
    const received: string[] = [];
    try {
      await sleep(attempt % 6);
      await cache.subscribe(channel, (message) => received.push(message));
      await cache.publish(channel, "hello");
      await eventually("the message arrives", () => received.length > 0, 2_000);
      assert.deepEqual(received, ["hello"]);
    } finally {
      await cache.close();
    }
  }
});
