import { randomUUID } from "node:crypto";
import { inSpan } from "@atrium/kit";
import type { LlmClient, LlmJsonSchema, LlmMessage, LlmTier } from "../llm/llm-client.js";
import type { MemoryContext, MemoryScope } from "../memory/memory-gateway.js";
import type { TraceEmitter } from "../trace/trace-bus.js";
import { BudgetExhaustedError, type BudgetTracker } from "./budget.js";
import type { AgentRole, KernelStatus, PendingItem, Source } from "./kernel-types.js";

/** What one sub-agent run produced. */
export interface AgentResult {
  status: KernelStatus;
  summary: string;
  payload?: unknown;
  sources?: Source[];
  pending?: PendingItem[];
}

export interface SubAgent {
  readonly role: AgentRole;
  run(step: StepContext): Promise<AgentResult>;
}

export interface AskOptions {
  streamThinking?: boolean;
  jsonSchema?: LlmJsonSchema;
}

/** Everything a sub-agent may use during one chat step. */
export interface StepContext {
  task: string;
  systemPrompt: string;
  context: Record<string, unknown>;
  agentId: string;
  scope: MemoryScope;
  trace: TraceEmitter;
  /** Aborted when the caller gives up or the wall-clock budget runs out. */
  signal: AbortSignal;
  /** Undefined when no LLM is configured: sub-agents then use their documented fallbacks. */
  llm: LlmClient | undefined;
  memory: MemoryContext | undefined;
  /** Results of earlier sub-agent runs of this step, so a fallback can build on them. */
  earlier: (AgentResult & { role: AgentRole })[];
  budget: BudgetTracker;
  /** On a resumed step, the run that paused it: its payload (a draft, say) need not be made again. */
  resumed?: AgentResult & { role: AgentRole };
}

/** What a "no LLM" answer tells the operator to set. */
export const noLlmHint =
  "set LLM_BASE_URL (and LLM_API_KEY, LLM_MODEL) to an OpenAI-compatible API";

/** One LLM call on the step's budget, with the step's system prompt prepended. */
export async function ask(
  step: StepContext,
  tier: LlmTier,
  purpose: string,
  messages: LlmMessage[],
  options: AskOptions = {},
): Promise<string> {
  if (!step.llm) throw new Error(`no LLM is configured: ${noLlmHint}`);
  if (step.budget.remainingTokens() <= 0) throw new BudgetExhaustedError("tokens");
  const all: LlmMessage[] = step.systemPrompt
    ? [{ role: "system", content: step.systemPrompt }, ...messages]
    : messages;
  const result = await step.llm.complete({
    tier,
    purpose,
    messages: all,
    trace: step.trace,
    streamThinking: options.streamThinking,
    jsonSchema: options.jsonSchema,
    maxTokens: Math.min(step.budget.remainingTokens(), 4096),
    signal: step.signal,
  });
  step.budget.add(result.usage);
  return result.text;
}

const preview = (value: unknown, max = 2000): unknown => {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  if (text === undefined) return null;
  if (text.length <= max) return value;
  return `${text.slice(0, max)}… (${text.length} characters)`;
};

/**
 * Runs a tool call between `tool_start` and `tool_result` events, in an `execute_tool` span as
 * OpenTelemetry's GenAI conventions name it while tracing is on (no arguments or results: they
 * are opt-in content). Memory's tools retrieve (`datastore`); the others call out from the agent
 * host (`extension`). Results in the trace are cut to 2,000 characters; the caller gets them whole.
 */
export async function runTool<T>(
  step: StepContext,
  agent: AgentRole | "kernel",
  tool: string,
  args: Record<string, unknown>,
  run: () => Promise<T>,
  describe: (result: T) => unknown = (r) => r,
): Promise<T> {
  const callId = randomUUID();
  const attributes = {
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": tool,
    "gen_ai.tool.call.id": callId,
    "gen_ai.tool.type": tool.startsWith("memory.") ? "datastore" : "extension",
  };
  return inSpan("atrium-agent", `execute_tool ${tool}`, attributes, async () => {
    const started = performance.now();
    await step.trace.emit("tool_start", { call_id: callId, agent, tool, arguments: args });
    try {
      const result = await run();
      await step.trace.emit("tool_result", {
        call_id: callId,
        agent,
        tool,
        ok: true,
        result: preview(describe(result)),
        duration_ms: Math.round(performance.now() - started),
      });
      return result;
    } catch (error) {
      await step.trace.emit("tool_result", {
        call_id: callId,
        agent,
        tool,
        ok: false,
        error: error instanceof Error ? error.message : String(error),
        duration_ms: Math.round(performance.now() - started),
      });
      throw error;
    }
  });
}

export const think = (step: StepContext, phase: string, thought: string) =>
  step.trace.emit("thinking", { thought, phase });

/** What the observe phase loaded, as prompt text; empty without memory. */
export function memoryNotes(step: StepContext): string {
  const memory = step.memory;
  if (!memory) return "";
  const parts: string[] = [];
  if (memory.recent.length > 0) {
    const recent = memory.recent.slice(-10).map((e) => `${e.role}: ${e.content.slice(0, 500)}`);
    parts.push(`Recent conversation:\n${recent.join("\n")}`);
  }
  if (memory.pages.length > 0) {
    const pages = memory.pages.slice(0, 5).map((p) => `- ${p.topic}: ${p.summary.slice(0, 500)}`);
    parts.push(`Relevant memories:\n${pages.join("\n")}`);
  }
  return parts.join("\n\n");
}
