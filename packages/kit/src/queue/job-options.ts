import type { JobOptions } from "./queue.js";

export interface ResolvedJobOptions {
  attempts: number;
  backoffMs: number;
  dedupeKey?: string;
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
  return { attempts, backoffMs, dedupeKey: options.dedupeKey };
}

/** Delay before the next attempt after `failedAttempt` failed; BullMQ's "exponential" backoff. */
export function backoffDelayMs(backoffMs: number, failedAttempt: number): number {
  return Math.round(2 ** (failedAttempt - 1) * backoffMs);
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
