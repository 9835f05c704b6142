export interface JobOptions {
  /** Total attempts including the first; default 3. */
  attempts?: number;
  /** Base delay of the exponential backoff between attempts; default 1000 ms. */
  backoffMs?: number;
  /** Jobs with the same group are processed fairly against other groups (e.g. one per scope). */
  group?: string;
  /** A job id; adding a job whose id is already queued does nothing. */
  jobId?: string;
}

export interface Job<Data = unknown> {
  id: string;
  name: string;
  data: Data;
  /** 1 on the first run. */
  attempt: number;
}

export interface FailedJob<Data = unknown> extends Job<Data> {
  error: string;
  failedAt: Date;
}

export type JobHandler<Data = unknown> = (job: Job<Data>) => Promise<void>;

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
  close(): Promise<void>;
}
