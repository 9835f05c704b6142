// Bodies of the chat endpoints as they travel (snake_case, as the chat spec names them).

export interface ChatRequest {
  message: string;
  /** Supply one to open the trace stream before the answer arrives; default chat_<12 hex>. */
  workflow_id?: string;
  agent_id?: string;
  system_prompt?: string;
  context?: Record<string, unknown>;
  /** While another step of the workflow runs: `reject` (409, default), `enqueue`, `interrupt`. */
  on_busy?: "reject" | "enqueue" | "interrupt";
}

export interface ChatSource {
  title: string;
  url: string;
  source: string;
}

export interface ChatResponse {
  workflow_id: string;
  step_id: string;
  status: "success" | "failure" | "yield";
  answer: string;
  sources: ChatSource[];
  tokens: Record<string, number>;
  elapsed_ms: number;
  /** On `yield`: what the step waits for, each naming the setting, approval or consent to supply. */
  pending?: ChatPendingItem[];
}

/**
 * What a yielded step waits for. A `consent` item's step resumes by itself once the person has
 * connected `provider` at `authorization_url`; the others are supplied with a resume.
 */
export type ChatPendingItem =
  | { kind: "credentials" | "approval"; detail: string }
  | { kind: "consent"; provider: string; authorization_url: string; detail: string };

export type TraceEventType =
  | "thinking"
  | "tool_start"
  | "tool_result"
  | "llm_request"
  | "llm_response"
  | "step_complete"
  | "timeout"
  | "error";

export interface TraceEvent {
  workflow_id: string;
  step_id: string;
  type: TraceEventType;
  timestamp: string;
  data: Record<string, unknown>;
  /** Per-workflow sequence number; the SSE id, so a stream resumes after it. */
  seq?: number;
}

/** Where a step is in its life (docs/chat.md, Run lifecycle). */
export type ChatRunStatus = "queued" | "running" | "yielded" | "completed" | "failed" | "cancelled";

/** The answer of a background start or resume (HTTP 202). */
export interface ChatRunAccepted {
  workflow_id: string;
  step_id: string;
  status: ChatRunStatus;
}

/** A step's run as GET /chat/runs/{workflow_id}/{step_id} shows it. */
export interface ChatRun extends ChatRunAccepted {
  /** How many times the step paused; a resume may name the pause it answers. */
  pause: number;
  /** When yielded: what the step waits for. */
  pending?: ChatResponse["pending"];
  /** Why it failed or was cancelled. */
  reason?: string;
  /** The step's last answer (at its end or last pause). */
  response?: Pick<ChatResponse, "status" | "answer" | "sources" | "tokens" | "pending">;
  host: string | null;
  cancel_requested: boolean;
  lease_expires_at?: string;
  created_at: string;
  updated_at: string;
}

/** What a resume supplies for what the yielded step waits for. */
export interface ChatResumeRequest {
  /** The pause answered (ChatRun.pause); a stale one is refused with 409. */
  pause?: number;
  approval?: "approve" | "deny";
  /** The broker connection a `credentials` item asks for. */
  connection_id?: string;
  context?: Record<string, unknown>;
}

/** What a waiting step waits for: `approval`, `credentials` or another pending kind. */
export type ChatPendingKind = NonNullable<ChatResponse["pending"]>[number]["kind"];

/** A page of GET /chat/runs?status=yielded: the steps waiting, newest pause first. */
export interface ChatWaitingQuery {
  /** Only the steps waiting for this kind (`approval`: the approvals to decide). */
  pending?: ChatPendingKind;
  /** 1 to 200; the host's default is 50. */
  limit?: number;
  /** The `next_cursor` of the previous page. */
  cursor?: string;
}

/** A step waiting for a person or a setting, as the approvals list shows it. */
export interface ChatWaitingStep {
  workflow_id: string;
  step_id: string;
  /** The pause a resume of this step names. */
  pause: number;
  pending: NonNullable<ChatResponse["pending"]>;
  /** The step's answer at the pause: what it would act on once approved. */
  draft: string;
  /** The message the step runs. */
  message: string;
  asked_by: { user_id: string; session_id?: string; agent_id: string; workflow_id: string };
  /** When it paused. */
  asked_at: string;
  created_at: string;
}

export interface ChatWaitingPage {
  runs: ChatWaitingStep[];
  /** Present when the page is full: pass it as `cursor` for the next one. */
  next_cursor?: string;
}
