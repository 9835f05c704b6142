import { randomUUID } from "node:crypto";
import type { Queue, RunningJob } from "@atrium/kit";
import { type Scope, scopeKey } from "../domain.js";
import type { EventStore } from "../store/events.js";
import {
  CHAIN_CHECK_JOB,
  type ChainCheckJob,
  type ChainCheckWorker,
} from "./chain-check-worker.js";

export interface ChainCheckSchedulerOptions {
  queue: Queue;
  events: EventStore;
  worker: ChainCheckWorker;
  /**
   * How long a requested check waits before it runs, so that a burst of messages is checked in
   * one pass; default 200 ms. Messages are in the context window at once either way.
   */
  delayMs?: number;
  /** Checks this process runs at once (queue concurrency); default 2. */
  concurrency?: number;
  /**
   * A check could not be queued (Redis away). The message is stored and the next sweep queues
   * its check, so the request that stored it still succeeds.
   */
  onQueueError?: (error: unknown) => void;
}

const dedupeKey = (scope: Scope) => `chain:${scopeKey(scope)}`;

/**
 * When chain checks run. One `cognitive_chain_check` job per scope at a time (the queue's dedupe
 * key), delayed a little so that bursts coalesce, and two ways to skip the queue round trip that
 * a request would otherwise pay after every stored message:
 * - this process added the scope's job itself less than half its delay ago: the job cannot have
 *   started, so it will read the message;
 * - this process is checking the scope right now: the check's last step (after it released the
 *   key and stopped counting as running here) looks for messages that came in too late for it
 *   and adds a job for them.
 * Both rest only on what this process knows; on any other instance an add is coalesced by the
 * queue and covered by the same last step of whichever instance runs the check.
 */
export function createChainCheckScheduler(options: ChainCheckSchedulerOptions) {
  const { queue, events, worker } = options;
  const delayMs = options.delayMs ?? 200;
  /** Scope → checks this process is running for it. */
  const running = new Map<string, number>();
  /** Scope → until when (performance.now()) a job this process added cannot have started. */
  const pendingUntil = new Map<string, number>();
  /** Per scope: the add on its way to the queue, and the one that will follow it. */
  const adding = new Map<string, { current: Promise<void>; next?: Promise<void> }>();

  async function add(scope: Scope): Promise<void> {
    const key = scopeKey(scope);
    const jobId = randomUUID();
    const sentAt = performance.now();
    const id = await queue.add<ChainCheckJob>(
      CHAIN_CHECK_JOB,
      { scope },
      { dedupeKey: dedupeKey(scope), attempts: 5, backoffMs: 1000, delayMs, jobId },
    );
    // Created now, the job is due no earlier than sentAt + delayMs: half of that is margin for
    // clocks of other instances that promote delayed jobs.
    if (id !== jobId) return;
    const until = sentAt + delayMs / 2;
    pendingUntil.set(key, until);
    // Forgotten once it no longer counts, also for scopes that never send another message.
    setTimeout(() => {
      if (pendingUntil.get(key) === until) pendingUntil.delete(key);
    }, delayMs / 2).unref();
  }

  /** Whether a check is sure to read what was committed until now (see above). */
  function covered(key: string): boolean {
    if (running.has(key)) return true;
    const until = pendingUntil.get(key);
    if (until === undefined) return false;
    if (performance.now() < until) return true;
    pendingUntil.delete(key);
    return false;
  }

  /**
   * Callers that arrive while an add for the scope is in flight share one follow-up sent after
   * it, which reaches the queue after each of their messages was committed, as their own would
   * have (unless the add in flight created a job that covers them); a burst holds at most one
   * add in flight and one waiting.
   */
  function coalescedAdd(scope: Scope): Promise<void> {
    const key = scopeKey(scope);
    const inFlight = adding.get(key);
    if (inFlight) {
      inFlight.next ??= inFlight.current
        .catch(() => undefined)
        .then(() => (covered(key) ? undefined : add(scope)));
      return inFlight.next;
    }
    const entry: { current: Promise<void>; next?: Promise<void> } = { current: add(scope) };
    adding.set(key, entry);
    const advance = (): void => {
      if (entry.next) {
        entry.current = entry.next;
        delete entry.next;
        entry.current.then(advance, advance);
      } else adding.delete(key);
    };
    entry.current.then(advance, advance);
    return entry.current;
  }

  /** The queue handler of `cognitive_chain_check`. */
  async function run(job: RunningJob<ChainCheckJob>): Promise<void> {
    const { scope } = job.data;
    const key = scopeKey(scope);
    pendingUntil.delete(key);
    running.set(key, (running.get(key) ?? 0) + 1);
    try {
      await worker.processScope(scope);
    } finally {
      const left = (running.get(key) ?? 1) - 1;
      if (left > 0) running.set(key, left);
      else running.delete(key);
    }
    // In this order: from the release on, requests add jobs of their own; from the end of
    // `running`, requests here stop skipping; the look that follows sees every message whose
    // request skipped.
    await job.releaseDedupeKey();
    if ((await events.pending(scope, 1)).length > 0) await coalescedAdd(scope);
  }

  return {
    /** Call after committing messages of the scope: makes sure a check will read them. */
    request(scope: Scope): Promise<void> {
      if (covered(scopeKey(scope))) return Promise.resolve();
      return coalescedAdd(scope).catch((error) => options.onQueueError?.(error));
    },

    /** Adds a check for every scope with unchecked messages (start-up, schedule). */
    async sweep(): Promise<void> {
      for (const scope of await events.scopesWithPending()) await coalescedAdd(scope);
    },

    /** Starts running checks from the queue. */
    start(): void {
      queue.process<ChainCheckJob>(CHAIN_CHECK_JOB, run, {
        concurrency: options.concurrency ?? 2,
      });
    },
  };
}

export type ChainCheckScheduler = ReturnType<typeof createChainCheckScheduler>;
