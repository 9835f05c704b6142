import type { JobOptions } from "./queue.js";

export interface ResolvedJobOptions {
  attempts: number;
  backoffMs: number;
  dedupeKey?: string;
  delayMs: number;
  jobId?: string;
}

export const defaultAttempts = 3;
export const defaultBackoffMs = 1000;

export function resolveJobOptions(options: JobOptions = {}): ResolvedJobOptions {
  const attempts = options.attempts ?? defaultAttempts;
  const backoffMs = options.backoffMs ?? defaultBackoffMs;
  if (!Number.isInteger(attempts) || attempts < 1) {
    throw new RangeError(`attempts must be a whole number of at least 1, got ${attempts}`);
  }
  if (!Number.isFinite(backoffMs) || backoffMs < 0) {
    throw new RangeError(`backoffMs must be zero or more, got ${backoffMs}`);
  }
  const delayMs = options.delayMs ?? 0;
  if (!Number.isFinite(delayMs) || delayMs < 0) {
    throw new RangeError(`delayMs must be zero or more, got ${delayMs}`);
  }
  // BullMQ refuses ids with ":" and ids that are whole numbers (its own ids are).
  if (options.jobId !== undefined && !/^(?!\d+$)[\w.-]{1,200}$/.test(options.jobId)) {
    throw new RangeError(
      `jobId must be 1 to 200 letters, digits, "_", "." or "-", not digits only, got ${JSON.stringify(options.jobId)}`,
    );
  }
  return { attempts, backoffMs, dedupeKey: options.dedupeKey, delayMs, jobId: options.jobId };
}

/** Delay before the next attempt after `failedAttempt` failed; BullMQ's "exponential" backoff. */
export function backoffDelayMs(backoffMs: number, failedAttempt: number): number {
  return Math.round(2 ** (failedAttempt - 1) * backoffMs);
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
