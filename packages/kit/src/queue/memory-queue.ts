import { setTimeout as sleep } from "node:timers/promises";
import {
  backoffDelayMs,
  errorMessage,
  type ResolvedJobOptions,
  resolveJobOptions,
} from "./job-options.js";
import type { FailedJob, Job, JobHandler, Queue } from "./queue.js";

interface QueuedJob extends Job {
  options: ResolvedJobOptions;
}

/** Jobs of one name. */
interface JobLine {
  waiting: QueuedJob[];
  /** Delayed jobs and retries waiting out their backoff. */
  retryTimers: Map<QueuedJob, NodeJS.Timeout>;
  running: Set<Promise<void>>;
  handler?: JobHandler;
  concurrency: number;
  /** Newest first, like BullMQ's failed set. */
  failed: FailedJob[];
  /** dedupeKey → id of the job holding it. */
  dedupe: Map<string, string>;
  drainWaiters: { resolve: () => void; reject: (error: Error) => void }[];
}

/**
 * The in-process queue, with BullMQ's semantics: retries with exponential backoff, a failed set,
 * dedupe keys held until the job completes or fails. Data is copied through JSON as BullMQ
 * stores it, so a handler never sees the caller's objects. Jobs live and die with the process.
 */
export function createMemoryQueue(): Queue {
  const lines = new Map<string, JobLine>();
  let nextId = 1;
  let closed = false;

  function line(name: string): JobLine {
    let found = lines.get(name);
    if (found === undefined) {
      found = {
        waiting: [],
        retryTimers: new Map(),
        running: new Set(),
        concurrency: 1,
        failed: [],
        dedupe: new Map(),
        drainWaiters: [],
      };
      lines.set(name, found);
    }
    return found;
  }

  function isDrained(jobs: JobLine): boolean {
    return jobs.waiting.length === 0 && jobs.retryTimers.size === 0 && jobs.running.size === 0;
  }

  function settleDrainWaiters(jobs: JobLine): void {
    if (!isDrained(jobs)) return;
    for (const waiter of jobs.drainWaiters.splice(0)) waiter.resolve();
  }

  function releaseDedupeKey(jobs: JobLine, job: QueuedJob): void {
    const key = job.options.dedupeKey;
    if (key !== undefined && jobs.dedupe.get(key) === job.id) jobs.dedupe.delete(key);
  }

  function pump(jobs: JobLine): void {
    while (!closed && jobs.handler && jobs.running.size < jobs.concurrency) {
      const job = jobs.waiting.shift();
      if (job === undefined) break;
      const run = execute(jobs, jobs.handler, job).finally(() => {
        jobs.running.delete(run);
        pump(jobs);
        settleDrainWaiters(jobs);
      });
      jobs.running.add(run);
    }
  }

  async function execute(jobs: JobLine, handler: JobHandler, job: QueuedJob): Promise<void> {
    const { options, ...visible } = job;
    try {
      await handler({
        ...visible,
        releaseDedupeKey: async () => releaseDedupeKey(jobs, job),
      });
      releaseDedupeKey(jobs, job);
    } catch (error) {
      if (job.attempt < options.attempts && !closed) {
        const timer = setTimeout(
          () => {
            jobs.retryTimers.delete(job);
            jobs.waiting.push({ ...job, attempt: job.attempt + 1 });
            pump(jobs);
          },
          backoffDelayMs(options.backoffMs, job.attempt),
        );
        jobs.retryTimers.set(job, timer);
        return;
      }
      jobs.failed.unshift({ ...visible, error: errorMessage(error), failedAt: new Date() });
      releaseDedupeKey(jobs, job);
    }
  }

  return {
    kind: "memory",

    async add(name, data, jobOptions) {
      if (closed) throw new Error("queue is closed");
      const options = resolveJobOptions(jobOptions);
      const jobs = line(name);
      const holder =
        options.dedupeKey === undefined ? undefined : jobs.dedupe.get(options.dedupeKey);
      if (holder !== undefined) return holder;
      const id = options.jobId ?? String(nextId++);
      const copy = data === undefined ? undefined : JSON.parse(JSON.stringify(data));
      const job: QueuedJob = { id, name, data: copy, attempt: 1, options };
      if (options.dedupeKey !== undefined) jobs.dedupe.set(options.dedupeKey, id);
      if (options.delayMs > 0) {
        const timer = setTimeout(() => {
          jobs.retryTimers.delete(job);
          jobs.waiting.push(job);
          pump(jobs);
        }, options.delayMs);
        jobs.retryTimers.set(job, timer);
        return id;
      }
      jobs.waiting.push(job);
      // Started on a later turn, as by a worker, never inside the caller's add().
      setImmediate(() => pump(jobs));
      return id;
    },

    process(name, handler, { concurrency = 1 } = {}) {
      if (closed) throw new Error("queue is closed");
      if (!Number.isInteger(concurrency) || concurrency < 1) {
        throw new RangeError(
          `concurrency must be a whole number of at least 1, got ${concurrency}`,
        );
      }
      const jobs = line(name);
      if (jobs.handler) throw new Error(`jobs named "${name}" already have a handler`);
      jobs.handler = handler as JobHandler;
      jobs.concurrency = concurrency;
      setImmediate(() => pump(jobs));
    },

    async listFailed(name) {
      return [...(lines.get(name)?.failed ?? [])];
    },

    drained(name) {
      const jobs = line(name);
      if (isDrained(jobs)) return Promise.resolve();
      if (closed) return Promise.reject(new Error("queue is closed"));
      return new Promise((resolve, reject) => jobs.drainWaiters.push({ resolve, reject }));
    },

    async close({ graceMs } = {}) {
      if (closed) return;
      closed = true;
      for (const jobs of lines.values()) {
        for (const timer of jobs.retryTimers.values()) clearTimeout(timer);
        jobs.retryTimers.clear();
      }
      const finished = Promise.all([...lines.values()].flatMap((jobs) => [...jobs.running]));
      await (graceMs === undefined ? finished : Promise.race([finished, sleep(graceMs)]));
      for (const jobs of lines.values()) {
        for (const waiter of jobs.drainWaiters.splice(0)) {
          waiter.reject(new Error("queue closed before its jobs drained"));
        }
      }
    },
  };
}
