import type { RedisStateReporter } from "../cache/redis-state.js";
import { createBullmqQueue } from "./bullmq-queue.js";
import { createMemoryQueue } from "./memory-queue.js";
import type { Queue } from "./queue.js";

export interface QueueOptions {
  /** `REDIS_URL`; absent means the in-process queue. */
  redisUrl?: string;
  /** Told once when Redis goes away and once when it is back. */
  onRedisStateChange?: RedisStateReporter;
  /** Redis key prefix (`deploymentRedisPrefix`, so that deployments sharing a Redis stay apart). */
  prefix?: string;
}

export function createQueue(options: QueueOptions = {}): Queue {
  return options.redisUrl
    ? createBullmqQueue({
        redisUrl: options.redisUrl,
        onStateChange: options.onRedisStateChange,
        prefix: options.prefix,
      })
    : createMemoryQueue();
}
