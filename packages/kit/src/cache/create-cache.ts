import type { Cache } from "./cache.js";
import { createMemoryCache } from "./memory-cache.js";
import { createRedisCache } from "./redis-cache.js";

export interface CacheOptions {
  /** `REDIS_URL`; absent means the in-process cache. */
  redisUrl?: string;
}

export function createCache(options: CacheOptions = {}): Cache {
  return options.redisUrl ? createRedisCache({ url: options.redisUrl }) : createMemoryCache();
}
