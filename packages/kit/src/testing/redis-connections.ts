import { Redis } from "ioredis";
import { redisUrl } from "./servers.js";

/**
 * Kills the Redis connection of a client named `name` (CLIENT SETNAME) on the shared test server,
 * as a dropped network connection would: the server stays up for every other test.
 */
export async function killRedisConnection(name: string, url = redisUrl()): Promise<void> {
  const redis = new Redis(url);
  try {
    const clients = (await redis.client("LIST")) as string;
    const line = clients.split("\n").find((l) => l.includes(` name=${name} `));
    const id = line?.match(/^id=(\d+)/)?.[1];
    if (!id) throw new Error(`no Redis connection is named ${name}`);
    await redis.client("KILL", "ID", id);
  } finally {
    await redis.quit();
  }
}
