import type { RunStore } from "../runs/run-store.js";
import type { TraceEvent } from "./trace-event.js";
import type { WorkflowTraces } from "./workflow-index.js";

export type TraceHistoryFailure = "invalid_id" | "not_found" | "unreadable";

export class TraceHistoryError extends Error {
  constructor(
    readonly failure: TraceHistoryFailure,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "TraceHistoryError";
  }
}

/**
 * Where the steps' trace events are kept for history and the workflow list: JSON Lines files in
 * a local directory (one host), or PostgreSQL (several hosts behind one address).
 */
export interface TraceStore {
  /**
   * Keeps one event for its step; settles once it is stored. Events are stored in call order.
   * `json` is the event's JSON when the caller has it already, so it is not encoded again.
   */
  append(event: TraceEvent, json?: string): Promise<void>;
  /** The events of one step, oldest first. */
  read(workflowId: string, stepId: string): Promise<TraceEvent[]>;
  /** The workflows with stored events, most recently written first, with their steps. */
  workflows(limit: number): Promise<WorkflowTraces[]>;
  /** The steps' run state (resume, cancel, status, busy workflows), in the same durable store. */
  readonly runs: RunStore;
  close(): Promise<void>;
}
