import type { TraceBus, TraceEmitter } from "../trace/trace-bus.js";
import type { PendingItem } from "./pending-item.js";

// Its own module so that the run store, which the trace files use, does not import this one.
export type { PendingItem } from "./pending-item.js";

export type KernelStatus = "success" | "failure" | "yield";

export const agentRoles = ["researcher", "coder", "browser", "communicator"] as const;
export type AgentRole = (typeof agentRoles)[number];

export interface Source {
  title: string;
  url: string;
  /** Where it came from: `memory`, `web` or `browser`. */
  source: string;
}

export interface KernelInput {
  task: string;
  /** Prepended to every LLM conversation of the step; empty for none. */
  systemPrompt: string;
  /** Caller context with `workflow_id` and `step_id` merged in; `role` forces a sub-agent. */
  context: Record<string, unknown>;
  agentId: string;
  trace: TraceEmitter;
  /** Aborted when the caller gave up (e.g. the HTTP client disconnected). */
  signal?: AbortSignal;
  /**
   * Continues a step that yielded: the `metadata.checkpoint` of its output at the pause. The
   * kernel goes on from the run that paused, with what it had gathered; `context` carries what
   * the resume supplied (`approved`, `connection_id`, …).
   */
  resume?: { checkpoint: unknown };
}

export interface TokenUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export interface KernelOutput {
  status: KernelStatus;
  summary?: string;
  payload?: unknown;
  metadata: {
    tokens?: Partial<TokenUsage>;
    sources?: Source[];
    role?: AgentRole;
    pending?: PendingItem[];
    /** On yield: the state to hand back as `resume.checkpoint` (JSON, kept durably). */
    checkpoint?: unknown;
    [key: string]: unknown;
  };
}

/** What the chat router needs from a kernel. */
export interface ChatKernel {
  readonly traceBus: TraceBus;
  execute(input: KernelInput): Promise<KernelOutput>;
}
