import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { Retrieval, RetrievalRanks } from "../retrieval/retrieval.js";
import type { createEntityFacts } from "./entity-facts.js";

export const DEFAULT_SEARCH_LIMIT = 10;
export const MAX_SEARCH_LIMIT = 100;

export interface MemorySearchQuery {
  tenantId: string;
  userId: string;
  text: string;
  limit: number;
  filter: Record<string, string>;
  /** Attach each result's retrieval ranks (graph facts have none). */
  explain?: boolean;
}

/** A quoted turn as the API's SearchResultTurn message. */
export interface MemorySearchTurn {
  role: string;
  source: string;
  text: string;
  timestamp: Timestamp;
  eventId: string;
  sessionId: string;
  chainId: string;
}

export interface MemorySearchResult {
  content: string;
  /** The turns `content` quotes; absent for graph facts. */
  turns?: MemorySearchTurn[];
  similarityScore: number;
  sourceType: string;
  sourceId: string;
  timestamp: Timestamp;
  ranks?: RetrievalRanks;
}

/**
 * What SearchMemory answers for a user: the retrieved pages, then facts about the entities the
 * query names. Shared by the handler and the operator's search, so both show one list.
 */
export function createMemorySearch(deps: {
  retrieval: Retrieval;
  entityFacts: ReturnType<typeof createEntityFacts>;
}) {
  const { retrieval, entityFacts } = deps;
  return async function search(query: MemorySearchQuery): Promise<{
    results: MemorySearchResult[];
    /** The chains of the results kept, once each: the ones a caller recalled. */
    recalledChainIds: string[];
  }> {
    const { tenantId, userId, text, limit, filter } = query;
    const [pages, facts] = await Promise.all([
      retrieval.search({ tenantId, userId, text, limit, filter }, { explain: query.explain }),
      // Graph facts carry no chain metadata, so no filter can match them.
      Object.keys(filter).length === 0 ? entityFacts({ tenantId, userId }, text) : [],
    ]);
    const results: MemorySearchResult[] = pages.map((p) => ({
      content: p.content,
      turns: p.turns.map((t) => ({
        role: t.role,
        source: t.source,
        text: t.content,
        timestamp: timestampFromDate(t.occurredAt),
        eventId: t.eventId,
        sessionId: t.sessionId,
        chainId: t.chainId ?? "",
      })),
      similarityScore: p.score,
      sourceType: p.sourceType,
      sourceId: p.sourceId,
      timestamp: timestampFromDate(p.timestamp),
      ...(p.ranks ? { ranks: p.ranks } : {}),
    }));
    // Facts about entities the query names take the last places, a fifth of them at most:
    // the turns that state things outrank what the graph condensed from them.
    const factSlots = Math.min(facts.length, Math.max(1, Math.floor(limit / 5)));
    const kept = results.slice(0, Math.max(0, limit - factSlots));
    // A fact never scores above the page ranked before it: the list stays in score order.
    const floor = kept.at(-1)?.similarityScore ?? 1;
    const returned = [
      ...kept,
      ...facts
        .slice(0, Math.min(factSlots, limit - kept.length))
        .map((f) => ({ ...f, similarityScore: Math.min(f.similarityScore, floor) }))
        .sort((a, b) => b.similarityScore - a.similarityScore),
    ];
    return {
      results: returned,
      // Several results can quote turns of one chain: it was recalled once.
      recalledChainIds: [
        ...new Set(kept.filter((r) => r.sourceType === "dialogue_page").map((r) => r.sourceId)),
      ],
    };
  };
}

export type MemorySearch = ReturnType<typeof createMemorySearch>;
