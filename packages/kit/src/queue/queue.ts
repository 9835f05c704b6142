export interface JobOptions {
  /** Total attempts including the first; default 3. */
  attempts?: number;
  /** Base delay of the exponential backoff between attempts; default 1000 ms. */
  backoffMs?: number;
  /**
   * While a job with this key is waiting, delayed or running, adding another is a no-op; once it
   * completes or fails the key is free. Coalescing per scope is how one busy scope is kept from
   * flooding the queue ahead of everyone else.
   */
  dedupeKey?: string;
  /** The job runs no earlier than this many ms after the add; its dedupe key is held meanwhile. */
  delayMs?: number;
  /**
   * The id to give the job. When a dedupe key coalesced the add, the id of the job holding the
   * key comes back instead: comparing tells whether this add created a job.
   */
  jobId?: string;
}

export interface Job<Data = unknown> {
  id: string;
  name: string;
  data: Data;
  /** 1 on the first run. */
  attempt: number;
}

/** What a handler gets: the job, and control over its dedupe key. */
export interface RunningJob<Data = unknown> extends Job<Data> {
  /**
   * Frees the job's dedupe key before the job ends: an add from now on creates a new job. For a
   * handler whose last step looks for work that arrived too late for it (and adds a job for
   * it), so that nothing lands between that look and the key's release. No-op without a key.
   */
  releaseDedupeKey(): Promise<void>;
}

export interface FailedJob<Data = unknown> extends Job<Data> {
  error: string;
  failedAt: Date;
}

export type JobHandler<Data = unknown> = (job: RunningJob<Data>) => Promise<void>;

/**
 * The job-queue port. BullMQ and an in-process queue implement it with the same semantics:
 * retries with exponential backoff, and a job that keeps failing lands in a failed set.
 */
export interface Queue {
  readonly kind: "bullmq" | "memory";
  add<Data>(name: string, data: Data, options?: JobOptions): Promise<string>;
  /** Starts processing jobs of `name` with at most `concurrency` at a time. */
  process<Data>(name: string, handler: JobHandler<Data>, options?: { concurrency?: number }): void;
  listFailed(name: string): Promise<FailedJob[]>;
  /** Resolves when no job of `name` is waiting, delayed or running (tests and shutdown). */
  drained(name: string): Promise<void>;
  /** Stops taking jobs and waits for the running ones (see `QueueCloseOptions`). */
  close(options?: QueueCloseOptions): Promise<void>;
}

export interface QueueCloseOptions {
  /**
   * How long running jobs get to finish; default: as long as they take. Past it they are
   * abandoned and `close` still releases every connection: BullMQ's stalled check hands their
   * jobs to a worker again, in-process ones are lost with the process.
   */
  graceMs?: number;
}
