import type { SqlExecutor } from "@atrium/kit";
import type { PendingItem } from "../kernel/pending-item.js";

/** Where a step is in its life; see docs/chat.md for the transitions. */
export type RunStatus = "queued" | "running" | "yielded" | "completed" | "failed" | "cancelled";

export const runStatuses: readonly RunStatus[] = [
  "queued",
  "running",
  "yielded",
  "completed",
  "failed",
  "cancelled",
];

/** A run ends in one of these; nothing moves it out again. */
export const isFinal = (status: RunStatus) =>
  status === "completed" || status === "failed" || status === "cancelled";

/** The chat request a run executes, kept so that any host can resume it. */
export interface RunRequest {
  message: string;
  agent_id: string;
  system_prompt: string;
  context: Record<string, unknown>;
}

/** What the step answered: the fields of the POST /chat response. */
export interface RunResponse {
  status: "success" | "failure" | "yield";
  answer: string;
  sources: { title: string; url: string; source: string }[];
  tokens: Record<string, number>;
  pending?: PendingItem[];
}

export interface RunRecord {
  workflow_id: string;
  step_id: string;
  status: RunStatus;
  request: RunRequest;
  /** The kernel's state at its last pause, handed back to it on resume. */
  checkpoint?: unknown;
  /** The step's last answer (after each pause and at its end). */
  response?: RunResponse;
  /** Why a run failed or was cancelled. */
  reason?: string;
  /** The host running (or last to run) the step. */
  owner?: string;
  /** Until when the owner's claim holds without a heartbeat (ISO 8601). */
  lease_expires_at?: string;
  cancel_requested: boolean;
  /** How many times the step paused: a resume names the pause it answers. */
  pauses: number;
  /** Every approve or deny given to the step, oldest first (absent before the first). */
  decisions?: ApprovalDecision[];
  created_at: string;
  updated_at: string;
}

/** An audited answer to a pending approval: who gave it, which, when, for which pause. */
export interface ApprovalDecision {
  pause: number;
  decision: "approve" | "deny";
  /** The caller as the chat host knows it (see docs/chat.md, "Approvals"). */
  decided_by: string;
  decided_at: string;
}

/** A page of yielded runs, newest pause first. */
export interface YieldedQuery {
  /** Only runs waiting for an item of this kind. */
  pending?: PendingItem["kind"];
  limit: number;
  /** Only runs that paused before this one (the last of the previous page). */
  after?: RunPosition;
}

/** Newest first: by the time of the pause, then by ids, so pages neither repeat nor skip. */
type RunPosition = Pick<RunRecord, "updated_at" | "workflow_id" | "step_id">;
export const newestFirst = (a: RunPosition, b: RunPosition) =>
  b.updated_at.localeCompare(a.updated_at) ||
  b.workflow_id.localeCompare(a.workflow_id) ||
  b.step_id.localeCompare(a.step_id);

export interface NewRun {
  workflowId: string;
  stepId: string;
  request: RunRequest;
  /** `running` claims the workflow at once (refused while another step runs); `queued` waits. */
  status: "running" | "queued";
  owner: string;
  leaseMs: number;
}

/** How a run ended or paused, written by its owner. */
export interface RunOutcome {
  status: "yielded" | "completed" | "failed" | "cancelled";
  response?: RunResponse;
  checkpoint?: unknown;
  reason?: string;
}

/** An event recorded with the transition it reports (a chat.step.* webhook). */
export interface TransitionEvent {
  /** Unique per transition: recording one twice keeps one. */
  id: string;
  type: string;
  body: string;
}

/** Where transition events wait for delivery: the webhook outbox beside the runs. */
export interface TransitionOutbox {
  /** Adds the event unless one with its id is already there. */
  add(event: TransitionEvent): Promise<void>;
  /** The same, inside a transaction of the database the outbox lives in (PostgreSQL). */
  addWithin?(tx: SqlExecutor, event: TransitionEvent): Promise<void>;
}

export interface RunEvents {
  outbox: TransitionOutbox;
  /** The event of a run just moved to yielded or an end; undefined for none. */
  eventOf(run: RunRecord): TransitionEvent | undefined;
  /** A recorded transition whose event could not be handed to the outbox yet (it is retried). */
  onError(error: unknown, context: string): void;
}

export type CreateResult = { created: RunRecord } | { busy: RunRecord };

export type ClaimResult =
  | { claimed: RunRecord }
  /** Another step of the workflow is running. */
  | { busy: true }
  /** The run is not (or no longer) in the state the claim expects. */
  | { stale: RunRecord | undefined };

/**
 * Run state kept beside the trace history, in the same durable store, so that whichever host a
 * request reaches can resume, cancel or report a step. Every transition is a compare-and-set:
 * of two hosts trying the same one, exactly one succeeds. At most one step of a workflow is
 * `running` at a time.
 */
export interface RunStore {
  create(run: NewRun): Promise<CreateResult>;
  get(workflowId: string, stepId: string): Promise<RunRecord | undefined>;
  /** The step of the workflow that is running, if any. */
  running(workflowId: string): Promise<RunRecord | undefined>;
  /** queued → running, when no step of the workflow runs and no older one is queued. */
  claimQueued(
    workflowId: string,
    stepId: string,
    owner: string,
    leaseMs: number,
  ): Promise<ClaimResult>;
  /**
   * yielded → running for the resume of pause number `pause` (the current one); a `decision`
   * is recorded with the claim that it wins, so every approval or denial that took effect is
   * audited and a refused one is not.
   */
  claimResume(
    workflowId: string,
    stepId: string,
    pause: number,
    owner: string,
    leaseMs: number,
    decision?: ApprovalDecision,
  ): Promise<ClaimResult>;
  /** The yielded runs, newest pause first (the page GET /chat/runs?status=yielded shows). */
  listYielded(query: YieldedQuery): Promise<RunRecord[]>;
  /** Records the outcome of the owner's run; false when the run is no longer the owner's. */
  finish(workflowId: string, stepId: string, owner: string, outcome: RunOutcome): Promise<boolean>;
  /** Extends the owner's lease; undefined when the run is no longer the owner's. */
  renew(
    workflowId: string,
    stepId: string,
    owner: string,
    leaseMs: number,
  ): Promise<{ cancelRequested: boolean } | undefined>;
  /**
   * Cancels a queued or yielded run at once (its record afterwards, `changed` true); marks a
   * running one for its owner to stop (`changed` false). Undefined for an unknown run.
   */
  cancel(
    workflowId: string,
    stepId: string,
    reason: string,
  ): Promise<{ run: RunRecord; changed: boolean } | undefined>;
  /** Fails the running steps whose lease ran out (their host died); returns them. */
  expire(): Promise<RunRecord[]>;
  /**
   * The same runs, with every transition to yielded, completed, failed or cancelled (`finish`,
   * `cancel`, `expire`) written in one write with its event: one transaction with the outbox's
   * row, or one run file carrying the event until the outbox has it. A crash can neither keep a
   * transition without its event nor record the event of a transition that did not happen.
   */
  withEvents(events: RunEvents): RunStore;
}
