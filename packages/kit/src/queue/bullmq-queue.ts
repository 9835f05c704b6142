import { setTimeout as sleep } from "node:timers/promises";
import { type Job as BullJob, Queue as BullQueue, Worker } from "bullmq";
import { Redis } from "ioredis";
import {
  createRedisStateTracker,
  isRedisConnectionError,
  type RedisStateReporter,
  RedisUnavailableError,
} from "../cache/redis-state.js";
import { resolveJobOptions } from "./job-options.js";
import type { FailedJob, JobHandler, Queue } from "./queue.js";

export interface BullmqQueueOptions {
  redisUrl: string;
  /**
   * Key prefix. The default carries a hash tag so every key of a queue lands in one slot, which
   * BullMQ's scripts need on Redis Cluster.
   */
  prefix?: string;
  /** Receives worker errors other than Redis being away; BullMQ retries on its own after them. */
  onError?: (error: Error) => void;
  /** Told once when Redis goes away and once when it is back (default: a process warning). */
  onStateChange?: RedisStateReporter;
  /** Longest an `add` waits for Redis (default 500 ms); then it fails. */
  commandTimeoutMs?: number;
  /** How often `drained` looks at the job counts. */
  drainPollMs?: number;
}

const unfinishedStates = [
  "waiting",
  "delayed",
  "active",
  "prioritized",
  "waiting-children",
  "paused",
] as const;

const warnQueueError = (error: Error) =>
  process.emitWarning(`job queue: ${error.message}`, { code: "ATRIUM_QUEUE" });

/** QUIT when Redis answers in time; a connection that is away or slow is cut, not retried. */
async function release(connection: Redis, timeoutMs: number): Promise<void> {
  if (connection.status === "ready") {
    await Promise.race([connection.quit().catch(() => undefined), sleep(timeoutMs)]);
  }
  connection.disconnect();
}

/**
 * The BullMQ queue: one BullMQ queue per job name. Workers share a connection whose commands are
 * never given up on (BullMQ requires it of blocking workers); producers have their own, bounded
 * like the cache's, so an `add` fails within its timeout, or at once when Redis is known to be
 * away, instead of waiting for Redis to come back.
 */
export function createBullmqQueue(options: BullmqQueueOptions): Queue {
  const prefix = options.prefix ?? "{atrium}";
  const reportError = options.onError ?? warnQueueError;
  const state = createRedisStateTracker("queue", options.onStateChange);
  const addTimeoutMs = options.commandTimeoutMs ?? 500;
  const connection = new Redis(options.redisUrl, { maxRetriesPerRequest: null });
  const producer = new Redis(options.redisUrl, {
    commandTimeout: addTimeoutMs,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
  });
  // ioredis gives a closed connection no code: a worker or queue error while a connection is not
  // up is Redis being away, told once by the tracker, not a failure to report.
  const onError = (error: Error) =>
    isRedisConnectionError(error) || connection.status !== "ready" || producer.status !== "ready"
      ? state.noteError(error)
      : reportError(error);
  state.track(connection);
  state.track(producer);
  let producerWasReady = false;
  const firstReady = new Promise<void>((resolve) => producer.once("ready", resolve)).then(() => {
    producerWasReady = true;
  });
  /** At start-up an add waits (bounded) for the first connection; after it, never. */
  async function producerReady(): Promise<void> {
    if (producer.status === "ready") return;
    if (!producerWasReady) {
      let timer: NodeJS.Timeout | undefined;
      const ready = await Promise.race([
        firstReady.then(() => true),
        new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(false), addTimeoutMs);
        }),
      ]).finally(() => clearTimeout(timer));
      if (ready && (producer.status as string) === "ready") return;
    }
    throw new RedisUnavailableError("Redis is unavailable: job not queued");
  }
  const queues = new Map<string, BullQueue>();
  const workers = new Map<string, Worker>();
  let closed = false;

  function queueFor(name: string): BullQueue {
    let queue = queues.get(name);
    if (queue === undefined) {
      queue = new BullQueue(name, { connection: producer, prefix });
      queue.on("error", onError);
      queues.set(name, queue);
    }
    return queue;
  }

  function toFailedJob(job: BullJob): FailedJob {
    return {
      id: job.id ?? "",
      name: job.queueName,
      data: job.data,
      attempt: job.attemptsMade,
      error: job.failedReason,
      failedAt: new Date(job.finishedOn ?? job.processedOn ?? job.timestamp),
    };
  }

  return {
    kind: "bullmq",

    async add(name, data, jobOptions) {
      if (closed) throw new Error("queue is closed");
      // BullMQ waits for a first connection without bound; this answers within the timeout.
      await producerReady();
      const { attempts, backoffMs, dedupeKey, delayMs, jobId } = resolveJobOptions(jobOptions);
      const job = await queueFor(name).add(name, data, {
        attempts,
        ...(delayMs > 0 ? { delay: delayMs } : {}),
        ...(jobId === undefined ? {} : { jobId }),
        backoff: { type: "exponential", delay: backoffMs },
        removeOnComplete: true,
        removeOnFail: false,
        // Simple mode: the key is held until the job completes or finally fails.
        ...(dedupeKey === undefined ? {} : { deduplication: { id: dedupeKey } }),
      });
      if (job.id === undefined) throw new Error(`BullMQ returned no id for a job of "${name}"`);
      return job.id;
    },

    process(name, handler, { concurrency = 1 } = {}) {
      if (closed) throw new Error("queue is closed");
      if (!Number.isInteger(concurrency) || concurrency < 1) {
        throw new RangeError(
          `concurrency must be a whole number of at least 1, got ${concurrency}`,
        );
      }
      if (workers.has(name)) throw new Error(`jobs named "${name}" already have a handler`);
      const run = handler as JobHandler;
      const worker = new Worker(
        name,
        async (job: BullJob) => {
          await run({
            id: job.id ?? "",
            name,
            data: job.data,
            attempt: job.attemptsMade + 1,
            // Removed only while this job still holds it.
            releaseDedupeKey: async () => void (await job.removeDeduplicationKey()),
          });
        },
        { connection, prefix, concurrency },
      );
      worker.on("error", onError);
      workers.set(name, worker);
    },

    async listFailed(name) {
      const failed = await queueFor(name).getFailed(0, -1);
      return failed.map(toFailedJob);
    },

    async drained(name) {
      const queue = queueFor(name);
      while (true) {
        if (closed) throw new Error("queue closed before its jobs drained");
        const counts = await queue.getJobCounts(...unfinishedStates);
        if (Object.values(counts).every((count) => count === 0)) return;
        await sleep(options.drainPollMs ?? 50);
      }
    },

    async close({ graceMs } = {}) {
      if (closed) return;
      closed = true;
      state.stop();
      const running = [...workers.values()];
      // Pausing stops fetching and waits for the jobs in hand; a forced close then releases the
      // workers' connections even when a job outlives the grace or Redis does not answer.
      const finished = Promise.all(running.map((worker) => worker.pause().catch(() => undefined)));
      await (graceMs === undefined ? finished : Promise.race([finished, sleep(graceMs)]));
      await Promise.all(running.map((worker) => worker.close(true)));
      await Promise.all([...queues.values()].map((queue) => queue.close()));
      await Promise.all([connection, producer].map((c) => release(c, addTimeoutMs)));
    },
  };
}
