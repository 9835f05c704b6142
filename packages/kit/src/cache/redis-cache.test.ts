import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { type AddressInfo, connect, createServer, type Socket } from "node:net";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import { cacheContract } from "../testing/cache-contract.js";
import { eventually } from "../testing/eventually.js";
import { killRedisConnection } from "../testing/redis-connections.js";
import { needsServer, redisUrl } from "../testing/servers.js";
import { CacheUnavailableError, createRedisCache } from "./redis-cache.js";
import { isRedisConnectionError } from "./redis-state.js";

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

test("a command Redis never answers fails as Redis being unavailable, told by its class", async (t) => {
  // Accepts and never answers: the command times out in ioredis, which gives that no code.
  // (Reading what arrives, so a client closing its end closes the server's too.)
  const silent = createServer((socket) => socket.resume());
  await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
  const port = (silent.address() as AddressInfo).port;
  const cache = createRedisCache({ url: `redis://127.0.0.1:${port}`, commandTimeoutMs: 100 });
  t.after(async () => {
    await cache.close();
    silent.close();
  });
  await assert.rejects(cache.get("key"), (error: unknown) => {
    assert.ok(error instanceof CacheUnavailableError, String(error));
    assert.ok(isRedisConnectionError(error));
    assert.ok(error.cause instanceof Error);
    return true;
  });
});

test("a command whose connection closes under it fails as unavailable; a Redis refusal does not", async (t) => {
  if (!(await needsServer(t, "redis"))) return;
  // A relay in front of the test server that can hold what the cache sends, then cut it.
  const target = new URL(redisUrl());
  const sockets = new Set<Socket>();
  let holding = false;
  const relay = createServer((client) => {
    const upstream = connect(Number(target.port || 6379), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("error", () => undefined);
    }
    client.on("data", (chunk) => {
      if (!holding) upstream.write(chunk);
    });
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => relay.listen(0, "127.0.0.1", resolve));
  const url = new URL(target);
  url.hostname = "127.0.0.1";
  url.port = String((relay.address() as AddressInfo).port);
  const cache = createRedisCache({ url: url.toString(), commandTimeoutMs: 5000 });
  t.after(async () => {
    await cache.close();
    for (const socket of sockets) socket.destroy();
    relay.close();
  });
  const key = `atrium-test:${randomUUID()}`;
  await cache.set(key, "a string", 60);
  await assert.rejects(cache.lrange(key, 0, -1), (error: unknown) => {
    assert.equal((error as Error).name, "ReplyError");
    assert.equal(isRedisConnectionError(error), false);
    return true;
  });
  holding = true;
  const inFlight = cache.get(key);
  await sleep(50);
  for (const socket of sockets) socket.destroy();
  await assert.rejects(inFlight, (error: unknown) => {
    assert.ok(error instanceof CacheUnavailableError, String(error));
    assert.ok(isRedisConnectionError(error));
    return true;
  });
});
