import { createHash } from "node:crypto";
import type { RunRecord, RunResponse, RunStatus } from "../runs/run-store.js";

/** The events a chat host sends to CHAT_WEBHOOK_URL; see docs/webhooks.md. */
export const STEP_EVENT_TYPES = [
  "chat.step.completed",
  "chat.step.yielded",
  "chat.step.failed",
] as const;
export type StepEventType = (typeof STEP_EVENT_TYPES)[number];

/** One event as the outbox keeps it: the body is signed and sent as written. */
export interface StepEvent {
  /** The webhook-id: the same for every attempt, so receivers dedupe on it. */
  id: string;
  type: StepEventType;
  body: string;
}

/** What a step's end or pause says, from the run store's view of it. */
export interface StepOutcome {
  workflow_id: string;
  step_id: string;
  status: Extract<RunStatus, "yielded" | "completed" | "failed" | "cancelled">;
  /** Pauses so far; a resume of a yielded step names this number. */
  pauses: number;
  response?: RunResponse;
  reason?: string;
}

const typeOf = (status: StepOutcome["status"]): StepEventType =>
  status === "completed"
    ? "chat.step.completed"
    : status === "yielded"
      ? "chat.step.yielded"
      : "chat.step.failed";

/**
 * The event of an outcome. Its id is derived from the step, the outcome and the pause, so that
 * two hosts recording the same transition (a lapsed lease failed by both) make one event, and
 * each pause of a step makes its own.
 */
export function stepEventOf(outcome: StepOutcome, at = new Date()): StepEvent {
  const type = typeOf(outcome.status);
  const digest = createHash("sha256")
    .update(`${outcome.workflow_id}\n${outcome.step_id}\n${outcome.status}\n${outcome.pauses}`)
    .digest("hex")
    .slice(0, 32);
  const response = outcome.response;
  const data = {
    workflow_id: outcome.workflow_id,
    step_id: outcome.step_id,
    status: outcome.status,
    pauses: outcome.pauses,
    ...(outcome.reason === undefined ? {} : { reason: outcome.reason }),
    ...(response
      ? {
          answer: response.answer,
          sources: response.sources,
          tokens: response.tokens,
          ...(response.pending ? { pending: response.pending } : {}),
        }
      : {}),
  };
  return {
    id: `msg_${digest}`,
    type,
    body: JSON.stringify({ type, timestamp: at.toISOString(), data }),
  };
}

export const outcomeOfRun = (run: RunRecord): StepOutcome | undefined =>
  run.status === "yielded" ||
  run.status === "completed" ||
  run.status === "failed" ||
  run.status === "cancelled"
    ? {
        workflow_id: run.workflow_id,
        step_id: run.step_id,
        status: run.status,
        pauses: run.pauses,
        ...(run.response ? { response: run.response } : {}),
        ...(run.reason === undefined ? {} : { reason: run.reason }),
      }
    : undefined;
