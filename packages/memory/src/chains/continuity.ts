import type { Llm } from "../llm/llm.js";
import { leadingPart, MESSAGE_ANALYSIS_CHARS } from "./analysis-budget.js";
import { type FairQueue, llmInTurn } from "./fair-queue.js";

/** Cosine at or above which a new message continues the open chain. */
export const CONTINUE_THRESHOLD = 0.72;
/** Cosine below which a new message starts a new chain. */
export const BREAK_THRESHOLD = 0.52;
/** Without an LLM, a message in the grey zone breaks the chain after this much silence. */
export const DEFAULT_MAX_GAP_MS = 30 * 60 * 1000;

export type ContinuityDecision = "continue" | "break";

export interface ContinuityInput {
  /** Cosine between the new user message and the open chain's user messages. */
  similarity: number;
  /** Time since the open chain's last event. */
  gapMs: number;
  /** The message belongs to the workflow the open chain belongs to. */
  sameWorkflow: boolean;
  /** For the LLM: the open chain's recent text and the new message. */
  chainText: string;
  message: string;
  /** Whose chain it is: the LLM call waits for this tenant's turn. */
  tenantId?: string;
}

export interface ContinuityJudgeOptions {
  llm?: Llm;
  maxGapMs?: number;
  continueThreshold?: number;
  breakThreshold?: number;
  onLlmError?: (error: unknown) => void;
  /** Where LLM calls wait for their tenant's turn (see ChainAnalyserOptions.llmTurns). */
  llmTurns?: FairQueue;
}

const sameTopicSchema = {
  type: "object",
  additionalProperties: false,
  required: ["same_topic"],
  properties: { same_topic: { type: "boolean" } },
};

/**
 * Decides whether a new user message continues the open chain: clear cases by cosine, the grey
 * zone by the LLM or, without one (or when it fails), by the time gap. Steps of one workflow
 * never split a chain: automation output is rarely lexically similar to the request behind it.
 */
export function createContinuityJudge(options: ContinuityJudgeOptions = {}) {
  const continueAt = options.continueThreshold ?? CONTINUE_THRESHOLD;
  const breakBelow = options.breakThreshold ?? BREAK_THRESHOLD;
  const maxGapMs = options.maxGapMs ?? DEFAULT_MAX_GAP_MS;
  const byGap = (gapMs: number): ContinuityDecision => (gapMs > maxGapMs ? "break" : "continue");
  const inTurn = llmInTurn(options.llmTurns);

  return async function judgeContinuity(input: ContinuityInput): Promise<ContinuityDecision> {
    if (input.sameWorkflow) return "continue";
    if (input.similarity >= continueAt) return "continue";
    if (input.similarity < breakBelow) return "break";
    const { llm } = options;
    if (!llm) return byGap(input.gapMs);
    try {
      const answer = (await inTurn(input.tenantId, () =>
        llm.completeJson(
          [
            {
              role: "system",
              content:
                "Does the new message continue the topic of the conversation so far? Answer same_topic true or false.",
            },
            {
              role: "user",
              content: `Conversation so far:\n${input.chainText.slice(-2000)}\n\nNew message:\n${leadingPart(input.message, MESSAGE_ANALYSIS_CHARS)}`,
            },
          ],
          { name: "topic_continuity", schema: sameTopicSchema },
        ),
      )) as { same_topic?: unknown };
      if (typeof answer.same_topic !== "boolean") throw new Error("same_topic is not a boolean");
      return answer.same_topic ? "continue" : "break";
    } catch (error) {
      options.onLlmError?.(error);
      return byGap(input.gapMs);
    }
  };
}

export type ContinuityJudge = ReturnType<typeof createContinuityJudge>;
