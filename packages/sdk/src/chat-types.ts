// Bodies of the chat endpoints as they travel (snake_case, as the chat spec names them).

export interface ChatRequest {
  message: string;
  /** Supply one to open the trace stream before the answer arrives; default chat_<12 hex>. */
  workflow_id?: string;
  agent_id?: string;
  system_prompt?: string;
  context?: Record<string, unknown>;
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
  /** On `yield`: what the step waits for, each naming the setting or approval to supply. */
  pending?: { kind: "credentials" | "approval"; detail: string }[];
}

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
