import { setTimeout as sleep } from "node:timers/promises";
import { type Job as BullJob, Queue as BullQueue, Worker } from "bullmq";
import { Redis } from "ioredis";
import { resolveJobOptions } from "./job-options.js";
import type { FailedJob, JobHandler, Queue } from "./queue.js";

export interface BullmqQueueOptions {
  redisUrl: string;
  /**
   * Key prefix. The default carries a hash tag so every key of a queue lands in one slot, which
   * BullMQ's scripts need on Redis Cluster.
   */
  prefix?: string;
  /** Receives connection and worker errors; BullMQ retries on its own after them. */
  onError?: (error: Error) => void;
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

/** The BullMQ queue: one BullMQ queue per job name, all on one shared Redis connection. */
export function createBullmqQueue(options: BullmqQueueOptions): Queue {
  const prefix = options.prefix ?? "{atrium}";
  const onError = options.onError ?? warnQueueError;
  // Workers block on Redis; BullMQ requires that their commands are never given up on.
  const connection = new Redis(options.redisUrl, { maxRetriesPerRequest: null });
  connection.on("error", onError);
  const queues = new Map<string, BullQueue>();
  const workers = new Map<string, Worker>();
  let closed = false;

  function queueFor(name: string): BullQueue {
    let queue = queues.get(name);
    if (queue === undefined) {
      queue = new BullQueue(name, { connection, prefix });
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

    async close() {
      if (closed) return;
      closed = true;
      // Worker.close waits for the jobs it is running.
      await Promise.all([...workers.values()].map((worker) => worker.close()));
      await Promise.all([...queues.values()].map((queue) => queue.close()));
      await connection.quit().catch(() => connection.disconnect());
    },
  };
}
