import { createBullmqQueue } from "./bullmq-queue.js";
import { createMemoryQueue } from "./memory-queue.js";
import type { Queue } from "./queue.js";

export interface QueueOptions {
  /** `REDIS_URL`; absent means the in-process queue. */
  redisUrl?: string;
}

export function createQueue(options: QueueOptions = {}): Queue {
  return options.redisUrl ? createBullmqQueue({ redisUrl: options.redisUrl }) : createMemoryQueue();
}
