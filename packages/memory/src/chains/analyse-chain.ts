import type { Llm } from "../llm/llm.js";
import { analysisText } from "./analysis-budget.js";
import { type FairQueue, llmInTurn } from "./fair-queue.js";
import {
  type ChainAnalysis,
  type EntityType,
  informationDensity,
  mergedAnalysis,
} from "./text-analysis.js";
import { inlineTextAnalysis, type TextAnalysis } from "./text-analysis-pool.js";

const ENTITY_TYPES: EntityType[] = ["person", "place", "organization", "thing"];

const analysisSchema = {
  type: "object",
  additionalProperties: false,
  required: ["summary", "topic", "importance", "entities", "relations"],
  properties: {
    summary: { type: "string", description: "Two or three sentences a later reader can act on." },
    topic: { type: "string", description: "A short label, at most five words." },
    importance: {
      type: "number",
      description: "0 (small talk) to 1 (facts the user will need again).",
    },
    entities: {
      type: "array",
      items: {
        type: "object",
        additionalProperties: false,
        required: ["name", "type"],
        properties: { name: { type: "string" }, type: { type: "string", enum: ENTITY_TYPES } },
      },
    },
    relations: {
      type: "array",
      items: {
        type: "object",
        additionalProperties: false,
        required: ["subject", "relation", "object", "confidence"],
        properties: {
          subject: { type: "string" },
          relation: { type: "string", description: "snake_case verb phrase, e.g. works_at" },
          object: { type: "string" },
          confidence: { type: "number" },
        },
      },
    },
  },
};

const clamp01 = (x: unknown, fallback: number) =>
  typeof x === "number" && Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : fallback;

function fromLlm(answer: unknown): ChainAnalysis {
  const a = answer as Partial<Record<string, unknown>>;
  if (typeof a.summary !== "string" || !a.summary.trim() || typeof a.topic !== "string") {
    throw new Error("LLM analysis without summary or topic");
  }
  const entities = (Array.isArray(a.entities) ? a.entities : [])
    .filter(
      (e): e is { name: string; type: string } =>
        typeof e?.name === "string" && e.name.trim() !== "",
    )
    .map((e) => ({
      name: e.name.trim(),
      type: (ENTITY_TYPES as string[]).includes(e.type) ? (e.type as EntityType) : "thing",
    }));
  const relations = (Array.isArray(a.relations) ? a.relations : [])
    .filter(
      (r): r is { subject: string; relation: string; object: string; confidence: number } =>
        typeof r?.subject === "string" &&
        typeof r?.object === "string" &&
        typeof r?.relation === "string",
    )
    .map((r) => ({
      subject: r.subject.trim(),
      relation: r.relation.trim() || "related_to",
      object: r.object.trim(),
      confidence: clamp01(r.confidence, 0.5),
    }));
  return {
    summary: a.summary.trim(),
    topic: a.topic.trim() || "general",
    importance: clamp01(a.importance, 0.5),
    entities,
    relations,
    method: "llm",
  };
}

export interface ChainAnalyser {
  /** Analyses a chain's text of `tenantId`: its messages' leading parts (analysis-budget.ts). */
  analyse(text: string, tenantId?: string): Promise<ChainAnalysis & { density: number }>;
  /**
   * The analysis of a closed chain (`into`, as it was analysed) with a closing chain (`added`,
   * just analysed) merged into it, their joined text `content`: the LLM's of the joined text
   * when one is configured, else the two analyses combined without tagging again
   * (`mergedAnalysis`).
   */
  merge(
    into: ChainAnalysis,
    added: ChainAnalysis,
    content: string,
    tenantId?: string,
  ): Promise<ChainAnalysis & { density: number }>;
}

export interface ChainAnalyserOptions {
  llm?: Llm;
  /** Called when the LLM fails and the extractive fallback is used instead. */
  onLlmError?: (error: unknown) => void;
  /** Where the extractive analysis runs; default on the calling thread. */
  textAnalysis?: TextAnalysis;
  /**
   * Where LLM calls wait for their tenant's turn (the queue the continuity judge shares), so
   * that one tenant's backlog of closing chains does not hold every other tenant's; default:
   * called at once.
   */
  llmTurns?: FairQueue;
}

/** LLM analysis when one is configured, the extractive fallback otherwise or when it fails. */
export function createChainAnalyser(options: ChainAnalyserOptions = {}): ChainAnalyser {
  const textAnalysis = options.textAnalysis ?? inlineTextAnalysis;
  const inTurn = llmInTurn(options.llmTurns);
  const analyser: ChainAnalyser = {
    async merge(into, added, content, tenantId) {
      if (options.llm) return analyser.analyse(content, tenantId);
      return {
        ...mergedAnalysis(into, added, content),
        density: informationDensity(analysisText(content)),
      };
    },
    async analyse(content, tenantId) {
      const text = analysisText(content);
      const density = informationDensity(text);
      const { llm } = options;
      if (llm) {
        try {
          const answer = await inTurn(tenantId, () =>
            llm.completeJson(
              [
                {
                  role: "system",
                  content:
                    "You file one conversation excerpt into an AI agent's long-term memory. Summarise it, label its topic, rate its importance, list the named entities and the relations between them stated in the text.",
                },
                { role: "user", content: text },
              ],
              { name: "chain_analysis", schema: analysisSchema },
            ),
          );
          return { ...fromLlm(answer), density };
        } catch (error) {
          options.onLlmError?.(error);
        }
      }
      return { ...(await textAnalysis.analyse(text, tenantId)), density };
    },
  };
  return analyser;
}
