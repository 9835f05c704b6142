import { Piscina } from "piscina";
import { ANALYSIS_TASK_MS } from "./analysis-budget.js";
import { createFairQueue } from "./fair-queue.js";
import {
  type ChainAnalysis,
  degradedAnalysis,
  extractiveAnalysis,
  extractiveSummary,
  leadingSummary,
} from "./text-analysis.js";

/** The rule-based text analysis the chain check runs without an LLM. */
export interface TextAnalysis {
  /** Summary, topic, importance, entities and relations of a closing chain of `tenantId`. */
  analyse(text: string, tenantId?: string): Promise<ChainAnalysis>;
  /** Extractive summary of a growing chain of `tenantId`. */
  summarise(text: string, tenantId?: string): Promise<string>;
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
  /**
   * Wall time one task may run on its thread. Past it the thread is terminated (piscina starts
   * another) and the caller gets the degraded result: the text's leading words and its topic,
   * no entities. Default `ANALYSIS_TASK_MS`.
   */
  taskTimeoutMs?: number;
  /** Told of each task that ran out of time. */
  onTimeout?: (task: "analyse" | "summarise", tenantId: string) => void;
}

// The task module sits beside this one with its extension: .ts when run from sources under
// tsx, which the worker then has to load itself (worker/entry.mjs), .js when built.
const fromSources = import.meta.url.endsWith(".ts");
const workerData = {
  module: new URL(`./text-analysis.worker.${fromSources ? "ts" : "js"}`, import.meta.url).href,
  tsx: fromSources ? import.meta.resolve("tsx/esm/api") : undefined,
};
const entry = new URL("../../worker/entry.mjs", import.meta.url).href;

/**
 * Text analysis on a piscina worker pool (piscina: crash replacement, termination of a task
 * that runs out of time, shutdown). Tasks reach the pool through a queue that takes turns
 * between tenants and keeps no more tasks in flight than there are threads, so a tenant's task
 * waits behind at most one task, of at most `taskTimeoutMs`, of each other tenant with work.
 */
export function createTextAnalysisPool(options: TextAnalysisPoolOptions): TextAnalysis {
  if (options.threads === 0) return inlineTextAnalysis;
  const taskTimeoutMs = options.taskTimeoutMs ?? ANALYSIS_TASK_MS;
  const pool = new Piscina({
    filename: entry,
    workerData,
    minThreads: options.threads,
    maxThreads: options.threads,
    niceIncrement: options.niceIncrement ?? 10,
  });
  const queue = createFairQueue({ concurrency: options.threads });
  // A thread's start (loading compromise, and compiling it under tsx) takes seconds on a busy
  // machine, and would count against the first task's budget and degrade it. So a task's clock
  // starts only once the threads have run a small task, and again after a thread is replaced.
  const warmUp = (tasks: number) =>
    Promise.all(
      Array.from({ length: tasks }, () => pool.run({ task: "summarise", input: "Warm up." })),
    ).then(
      () => {},
      () => {},
    );
  let started = warmUp(options.threads);

  function run<T>(
    task: "analyse" | "summarise",
    text: string,
    tenantId: string,
    degraded: (text: string) => T,
  ): Promise<T> {
    return queue.run(tenantId, async () => {
      await started;
      // The clock starts with the task on its thread: the fair queue holds it until then.
      const signal = AbortSignal.timeout(taskTimeoutMs);
      try {
        return (await pool.run({ task, input: text }, { signal })) as T;
      } catch (error) {
        if (!signal.aborted) throw error;
        options.onTimeout?.(task, tenantId);
        started = warmUp(1);
        return degraded(text);
      }
    });
  }

  return {
    analyse: (text, tenantId = "") => run("analyse", text, tenantId, degradedAnalysis),
    summarise: (text, tenantId = "") => run("summarise", text, tenantId, leadingSummary),
    close: () => pool.destroy(),
  };
}
