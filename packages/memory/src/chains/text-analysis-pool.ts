import { Piscina } from "piscina";
import { type ChainAnalysis, extractiveAnalysis, extractiveSummary } from "./text-analysis.js";

/** The rule-based text analysis the chain check runs without an LLM. */
export interface TextAnalysis {
  /** Summary, topic, importance, entities and relations of a closing chain. */
  analyse(text: string): Promise<ChainAnalysis>;
  /** Extractive summary of a growing chain. */
  summarise(text: string): Promise<string>;
  close(): Promise<void>;
}

/** On the calling thread: for tests and tools where nothing else waits on the event loop. */
export const inlineTextAnalysis: TextAnalysis = {
  analyse: async (text) => extractiveAnalysis(text),
  summarise: async (text) => extractiveSummary(text),
  close: async () => {},
};

export interface TextAnalysisPoolOptions {
  /** Worker threads; 0 analyses on the calling thread. */
  threads: number;
  /**
   * Added to the threads' nice value (Linux), so that request handling wins the CPU when both
   * want it; chain checks are background work. Default 10.
   */
  niceIncrement?: number;
}

// The task module sits beside this one with its extension: .ts when run from sources under
// tsx, which the worker then has to load itself (worker/entry.mjs), .js when built.
const fromSources = import.meta.url.endsWith(".ts");
const workerData = {
  module: new URL(`./text-analysis.worker.${fromSources ? "ts" : "js"}`, import.meta.url).href,
  tsx: fromSources ? import.meta.resolve("tsx/esm/api") : undefined,
};
const entry = new URL("../../worker/entry.mjs", import.meta.url).href;

/** Text analysis on a piscina worker pool (piscina: queueing, crash replacement, shutdown). */
export function createTextAnalysisPool(options: TextAnalysisPoolOptions): TextAnalysis {
  if (options.threads === 0) return inlineTextAnalysis;
  const pool = new Piscina({
    filename: entry,
    workerData,
    minThreads: options.threads,
    maxThreads: options.threads,
    niceIncrement: options.niceIncrement ?? 10,
  });
  return {
    analyse: (text) => pool.run({ task: "analyse", input: text }) as Promise<ChainAnalysis>,
    summarise: (text) => pool.run({ task: "summarise", input: text }) as Promise<string>,
    close: () => pool.destroy(),
  };
}
