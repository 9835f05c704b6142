import type { RedisStateReporter } from "../cache/redis-state.js";
import { createBullmqQueue } from "./bullmq-queue.js";
import { createMemoryQueue } from "./memory-queue.js";
import type { Queue } from "./queue.js";
import { type DeploymentQueuePrefixOptions, deploymentQueuePrefix } from "./queue-prefix.js";

export interface QueueOptions {
  /** `REDIS_URL`; absent means the in-process queue. */
  redisUrl?: string;
  /** Told once when Redis goes away and once when it is back. */
  onRedisStateChange?: RedisStateReporter;
  /** Redis key prefix; by default one derived from `deployment`. */
  prefix?: string;
  /** Where the deployment's data lives: two deployments on one Redis get different prefixes. */
  deployment?: DeploymentQueuePrefixOptions;
}

export function createQueue(options: QueueOptions = {}): Queue {
  return options.redisUrl
    ? createBullmqQueue({
        redisUrl: options.redisUrl,
        onStateChange: options.onRedisStateChange,
        prefix:
          options.prefix ??
          (options.deployment ? deploymentQueuePrefix(options.deployment) : undefined),
      })
    : createMemoryQueue();
}
