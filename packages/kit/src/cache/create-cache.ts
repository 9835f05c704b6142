import type { Cache } from "./cache.js";
import { createMemoryCache } from "./memory-cache.js";
import { createRedisCache } from "./redis-cache.js";
import type { RedisStateReporter } from "./redis-state.js";

export interface CacheOptions {
  /** `REDIS_URL`; absent means the in-process cache. */
  redisUrl?: string;
  /** Told once when Redis goes away and once when it is back. */
  onRedisStateChange?: RedisStateReporter;
}

export function createCache(options: CacheOptions = {}): Cache {
  return options.redisUrl
    ? createRedisCache({ url: options.redisUrl, onStateChange: options.onRedisStateChange })
    : createMemoryCache();
}
