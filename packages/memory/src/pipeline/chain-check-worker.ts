import { randomUUID } from "node:crypto";
import type { Sql } from "@atrium/kit";
import type { ChainAnalyser } from "../chains/analyse-chain.js";
import {
  analysisText,
  CHAIN_CHECK_JOB_MS,
  EMBED_CHARS,
  leadingPart,
} from "../chains/analysis-budget.js";
import type { ContinuityJudge } from "../chains/continuity.js";
import { findMergeTarget } from "../chains/heat.js";
import type { ChainAnalysis } from "../chains/text-analysis.js";
import { contentWords, keywordTopic } from "../chains/text-analysis.js";
import { inlineTextAnalysis, type TextAnalysis } from "../chains/text-analysis-pool.js";
import type { Scope, StmEvent } from "../domain.js";
import { type Embedder, embedOne } from "../embeddings/embedder.js";
import { cosineSimilarity, l2Normalize } from "../embeddings/vectors.js";
import { type ChainRecord, chainStore } from "../store/chains.js";
import type { EventStore } from "../store/events.js";
import { graphStore } from "../store/graph.js";
import type { VectorSearch } from "../store/vector-search.js";

export const CHAIN_CHECK_JOB = "cognitive_chain_check";

export interface ChainCheckJob {
  scope: Scope;
}

export interface ChainCheckWorkerOptions {
  sql: Sql;
  events: EventStore;
  embedder: Embedder;
  analyser: ChainAnalyser;
  judge: ContinuityJudge;
  vectorSearch: VectorSearch;
  /** Told the scopes whose chains a commit changed (the recent pages cache). */
  onChainsChanged?: (scopes: Scope[]) => Promise<void>;
  /** Where open chains are summarised; default on the calling thread. */
  textAnalysis?: TextAnalysis;
  /** Pending events read per pass; default 100. */
  batchSize?: number;
  /**
   * Wall time one job spends on a scope before it stops at the next message and leaves the
   * rest to the job the scheduler queues after it, behind other scopes' jobs; default
   * `CHAIN_CHECK_JOB_MS`.
   */
  jobBudgetMs?: number;
  now?: () => Date;
}

/**
 * A chain this long is closed even when the topic holds: analysis and re-summarising cost grows
 * with the chain, and one endless conversation would otherwise become one unsearchable blob.
 */
export const MAX_CHAIN_EVENTS = 40;
const MAX_CHAIN_CHARS = 12_000;
/** A merge never makes a chain longer than a few closed chains: long messages do not pile up. */
const MAX_MERGED_CHARS = 4 * MAX_CHAIN_CHARS;
const SUMMARY_WINDOW_CHARS = 4000;

/** What closing or growing a chain writes, in one transaction. */
interface ChainChange {
  save: ChainRecord;
  /** A chain merged into `save`. */
  remove?: string;
  /** Facts of the merged-in part, when `save` is in the graph already. */
  promote?: ChainAnalysis;
}

/** A chain check's write found events erased since it read them. */
class ErasedMeanwhile extends Error {}
/** Erasures one chain check gives way to before it fails (and is retried by the next sweep). */
const MAX_ERASURE_RETRIES = 5;

const speaker = (e: StmEvent) => (e.role === "user" ? "User" : "Agent");

/** Chain metadata: the events' own keys, the newest value winning, without provenance noise. */
function mergeMetadata(into: Record<string, string>, from: Record<string, string>) {
  for (const [k, v] of Object.entries(from)) into[k] = v;
}

/** A chain a reader can recognise as worth keeping: some distinct content words. */
function qualityOf(content: string): number {
  return Math.min(1, new Set(contentWords(analysisText(content))).size / 20);
}

/** What the continuity judge compares of a user message: its leading part, as analysis reads it. */
const embedMessage = (embedder: Embedder, content: string) =>
  embedOne(embedder, leadingPart(content, EMBED_CHARS));

/**
 * The `cognitive_chain_check` worker: reads the scope's pending messages in order, decides per
 * user message whether the open chain continues, closes it on a topic change (analysis, merge
 * into a very similar chain, graph promotion if that chain already was), and keeps the open
 * chain searchable with an extractive summary as it grows.
 */
export function createChainCheckWorker(options: ChainCheckWorkerOptions) {
  const { sql, events, embedder, analyser, judge, vectorSearch } = options;
  const textAnalysis = options.textAnalysis ?? inlineTextAnalysis;
  const batchSize = options.batchSize ?? 100;
  const jobBudgetMs = options.jobBudgetMs ?? CHAIN_CHECK_JOB_MS;
  const now = options.now ?? (() => new Date());

  function startChain(event: StmEvent, scope: Scope): ChainRecord {
    return {
      id: randomUUID(),
      scope,
      sessionId: event.sessionId,
      status: "open",
      topic: "",
      summary: "",
      content: "",
      metadata: {},
      eventIds: [],
      workflowId: event.metadata.workflow_id || null,
      embedding: [],
      embeddingModel: embedder.model,
      userVectorSum: null,
      analysisMethod: "extractive",
      entities: [],
      relations: [],
      importance: 0.5,
      density: 0.5,
      quality: 0,
      recallStrength: 1,
      accessCount: 0,
      lastAccessAt: event.timestamp,
      lastStrengthenedAt: null,
      heat: null,
      promotedAt: null,
      firstEventAt: event.timestamp,
      lastEventAt: event.timestamp,
    };
  }

  function append(chain: ChainRecord, event: StmEvent, userVector?: number[]) {
    chain.content += `${chain.content ? "\n" : ""}${speaker(event)}: ${event.content}`;
    chain.eventIds.push(event.id);
    mergeMetadata(chain.metadata, event.metadata);
    if (event.timestamp > chain.lastEventAt) chain.lastEventAt = event.timestamp;
    if (event.timestamp < chain.firstEventAt) chain.firstEventAt = event.timestamp;
    if (chain.lastAccessAt < chain.lastEventAt) chain.lastAccessAt = chain.lastEventAt;
    chain.sessionId = event.sessionId;
    if (userVector) {
      chain.userVectorSum = chain.userVectorSum
        ? chain.userVectorSum.map((x, i) => x + userVector[i])
        : [...userVector];
    }
  }

  /** A chain's vector, of its newest part. */
  async function embedChain(chain: ChainRecord) {
    chain.embedding = await embedOne(embedder, chain.content.slice(-EMBED_CHARS));
    chain.embeddingModel = embedder.model;
  }

  /** A closing chain's analysis (the LLM's when configured), read within the analysis budget. */
  const analyse = (chain: ChainRecord) => analyser.analyse(chain.content, chain.scope.tenantId);

  /** Summary, topic and vector of a chain that is still growing: cheap, extractive. */
  async function refreshOpen(chain: ChainRecord) {
    // The newest part: a growing chain is re-summarised on every check.
    const recent = chain.content.slice(-SUMMARY_WINDOW_CHARS);
    chain.summary = await textAnalysis.summarise(recent, chain.scope.tenantId);
    chain.topic = keywordTopic(recent);
    chain.quality = qualityOf(chain.content);
    await embedChain(chain);
  }

  /** A closed chain's analysis written to it: summary, topic, scores, entities, relations. */
  function describe(chain: ChainRecord, analysis: ChainAnalysis & { density: number }) {
    Object.assign(chain, {
      summary: analysis.summary,
      topic: analysis.topic,
      importance: analysis.importance,
      density: analysis.density,
      entities: analysis.entities,
      relations: analysis.relations,
      analysisMethod: analysis.method,
      quality: qualityOf(chain.content),
    });
  }

  /**
   * Closes a chain: full analysis (LLM when configured), then either merges it into a very
   * similar closed chain of the scope or stores it closed. Returns the chains to write and the
   * id of the chain to delete, applied by the caller in one transaction.
   */
  async function close(chain: ChainRecord): Promise<ChainChange> {
    const analysis = await analyse(chain);
    await embedChain(chain);
    const hits = await vectorSearch.search({
      ...chain.scope,
      embedding: chain.embedding,
      limit: 4,
    });
    const candidates = await chainStore.byIds(
      sql,
      hits.filter((h) => h.chainId !== chain.id).map((h) => h.chainId),
      true,
    );
    const similarity = new Map(hits.map((h) => [h.chainId, h.similarity]));
    const target = findMergeTarget(
      candidates
        .filter(
          (c) =>
            c.status === "closed" &&
            c.eventIds.length + chain.eventIds.length <= MAX_CHAIN_EVENTS &&
            c.content.length + chain.content.length <= MAX_MERGED_CHARS,
        )
        .map((c) => ({ chain: c, similarity: similarity.get(c.id) ?? 0 })),
    );
    if (!target) {
      chain.status = "closed";
      describe(chain, analysis);
      return { save: chain };
    }
    const merged = target.chain;
    const earlier: ChainAnalysis = {
      summary: merged.summary,
      topic: merged.topic,
      importance: merged.importance,
      entities: merged.entities,
      relations: merged.relations,
      method: merged.analysisMethod,
    };
    merged.content = `${merged.content}\n${chain.content}`;
    merged.eventIds = [...merged.eventIds, ...chain.eventIds];
    mergeMetadata(merged.metadata, chain.metadata);
    if (chain.firstEventAt < merged.firstEventAt) merged.firstEventAt = chain.firstEventAt;
    if (chain.lastEventAt > merged.lastEventAt) merged.lastEventAt = chain.lastEventAt;
    const mergedAnalysis = await analyser.merge(
      earlier,
      analysis,
      merged.content,
      merged.scope.tenantId,
    );
    const importance = Math.max(merged.importance, mergedAnalysis.importance);
    describe(merged, { ...mergedAnalysis, importance });
    await embedChain(merged);
    // The target's earlier facts are in the graph already; the new part's go in now, so that
    // promotion never counts one chain twice.
    return { save: merged, remove: chain.id, ...(merged.promotedAt ? { promote: analysis } : {}) };
  }

  async function write(changes: ChainChange[], doneIds: string[]) {
    await sql.transaction(async (tx) => {
      // An erasure that ran since the events were read leaves fewer of them: the batch is read
      // again, so that no chain is written from erased text. The share locks make an erasure
      // that starts now wait for this write and then rewrite what it wrote.
      const eventIds = [...new Set(changes.flatMap((c) => c.save.eventIds))];
      if (eventIds.length > 0) {
        const { rows } = await tx.query(
          "SELECT id FROM memory_events WHERE id = ANY($1::uuid[]) FOR SHARE",
          [eventIds],
        );
        if (rows.length < eventIds.length) throw new ErasedMeanwhile();
      }
      for (const { save, remove, promote } of changes) {
        if (remove) await chainStore.remove(tx, remove);
        await chainStore.save(tx, save);
        await events.placeInChain(tx, save.id, save.eventIds);
        await vectorSearch.upsert(tx, save);
        if (promote) await graphStore.promote(tx, save.scope, save.id, promote);
      }
      await events.markChained(doneIds, tx);
    });
    if (changes.length > 0) await options.onChainsChanged?.(changes.map((c) => c.save.scope));
  }

  /**
   * One pass over up to `batchSize` pending events, stopping at the first one after `deadline`
   * (performance.now()); false when there were none.
   */
  async function processBatch(scope: Scope, deadline: number): Promise<boolean> {
    const pending = await events.pending(scope, batchSize);
    if (pending.length === 0) return false;
    let open = await chainStore.open(sql, scope);
    // Events handled since the last write; a closed chain is written at once, so that a later
    // chain of the same batch can be merged into it.
    let handled: string[] = [];
    for (const event of pending) {
      if (event !== pending[0] && performance.now() >= deadline) break;
      if (event.content.trim()) {
        let userVector: number[] | undefined;
        if (event.role === "user") {
          userVector = await embedMessage(embedder, event.content);
          if (
            open &&
            (open.eventIds.length >= MAX_CHAIN_EVENTS || open.content.length >= MAX_CHAIN_CHARS)
          ) {
            await write([await close(open)], handled);
            handled = [];
            open = undefined;
          }
          if (open?.userVectorSum) {
            const wf = event.metadata.workflow_id;
            const decision = await judge({
              similarity: cosineSimilarity(userVector, l2Normalize(open.userVectorSum)),
              gapMs: event.timestamp.getTime() - open.lastEventAt.getTime(),
              sameWorkflow: Boolean(wf) && wf === open.workflowId,
              chainText: open.content,
              message: event.content,
              tenantId: scope.tenantId,
            });
            if (decision === "break") {
              await write([await close(open)], handled);
              handled = [];
              open = undefined;
            }
          }
        }
        open ??= startChain(event, scope);
        append(open, event, userVector);
      }
      handled.push(event.id);
    }
    const changes: ChainChange[] = [];
    if (open) {
      await refreshOpen(open);
      changes.push({ save: open });
    }
    await write(changes, handled);
    return true;
  }

  return {
    /**
     * Processes the scope's pending events until none are left or the job's budget is spent;
     * the scheduler queues another job for what is left.
     */
    async processScope(scope: Scope): Promise<void> {
      const deadline = performance.now() + jobBudgetMs;
      for (let erasures = 0; ; ) {
        try {
          if (!(await processBatch(scope, deadline)) || performance.now() >= deadline) return;
        } catch (error) {
          if (!(error instanceof ErasedMeanwhile) || ++erasures > MAX_ERASURE_RETRIES) throw error;
        }
      }
    },

    /**
     * A chain recomputed from the events that remain of it after an erasure, as if the erased
     * ones had never been stored: text, metadata, summary, topic, analysis and vectors, each
     * read within the same budget as when the chain was first built (a megabyte message is
     * embedded and analysed by its leading part here too).
     */
    async rebuild(chain: ChainRecord, remaining: StmEvent[]): Promise<ChainRecord> {
      const first = remaining[0].timestamp;
      const rebuilt: ChainRecord = {
        ...chain,
        content: "",
        eventIds: [],
        metadata: {},
        userVectorSum: null,
        firstEventAt: first,
        lastEventAt: first,
      };
      for (const event of remaining) {
        const userVector =
          event.role === "user" ? await embedMessage(embedder, event.content) : undefined;
        append(rebuilt, event, userVector);
      }
      if (chain.status === "open") {
        await refreshOpen(rebuilt);
        return rebuilt;
      }
      describe(rebuilt, await analyse(rebuilt));
      await embedChain(rebuilt);
      return rebuilt;
    },

    /** Closes open chains that went quiet, so they can be merged, promoted and archived. */
    async closeIdle(idleMs: number, limit = 100): Promise<number> {
      const idle = await chainStore.idleOpen(sql, new Date(now().getTime() - idleMs), limit);
      for (const chain of idle) {
        // A message that arrived meanwhile would still be pending: let its check decide.
        if ((await events.pending(chain.scope, 1)).length > 0) continue;
        await write([await close(chain)], []);
      }
      return idle.length;
    },
  };
}

export type ChainCheckWorker = ReturnType<typeof createChainCheckWorker>;
