import type { TransitionOutbox } from "../runs/run-store.js";
import type { StepEvent } from "./step-events.js";

/** An event waiting in the outbox, claimed by one host for one attempt. */
export interface OutboxEntry extends StepEvent {
  /** Attempts made before this one. */
  attempts: number;
  created_at: string;
}

export type AttemptResult =
  | { delivered: true }
  /** `retryAt` undefined: the retry window is over and the event is given up. */
  | { delivered: false; error: string; retryAt?: Date };

/**
 * Step events waiting for delivery, kept in the run store's database (or beside its files), so
 * that an event recorded by a host that then dies is delivered by the next one. Delivery is at
 * least once: an entry is settled only after its attempt.
 */
export interface WebhookOutbox extends TransitionOutbox {
  /** Leases up to `limit` due entries to `owner` for `leaseMs`. */
  claim(owner: string, leaseMs: number, limit: number): Promise<OutboxEntry[]>;
  /** Records the attempt on an entry `owner` still holds. */
  settle(id: string, owner: string, result: AttemptResult): Promise<void>;
  /** Hands an entry back unattempted (its host is stopping). */
  release(id: string, owner: string): Promise<void>;
  /** Deletes entries settled more than `retentionSeconds` ago, where settled ones are kept. */
  sweep?(retentionSeconds: number): Promise<number>;
}
