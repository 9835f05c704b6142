import { randomUUID } from "node:crypto";
import type { memoryV1 } from "@atrium/api";
import {
  type BlobStore,
  type Cache,
  failedPrecondition,
  freezeResult,
  identityKey,
  internal,
  invalidArgument,
  type Logger,
  notFound,
  type Sql,
  unimplemented,
} from "@atrium/kit";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";

import { recordAccess } from "../chains/heat.js";
import { extractEntities } from "../chains/text-analysis.js";
import {
  EVENT_ROLES,
  EVENT_TYPES,
  type EventRole,
  type Scope,
  type SessionRecord,
  type StmEvent,
} from "../domain.js";
import type { Embedder } from "../embeddings/embedder.js";
import { cosineSimilarity } from "../embeddings/vectors.js";
import type { ChainCheckScheduler } from "../pipeline/chain-check-scheduler.js";
import type { Promoter } from "../pipeline/promoter.js";
import type { Retrieval } from "../retrieval/retrieval.js";
import { type ChainRecord, chainStore } from "../store/chains.js";
import type { EventStore, InsertedEvent, NewEvent } from "../store/events.js";
import { type EntityFact, type EntityRecord, graphStore } from "../store/graph.js";
import { createIdempotencyStore, idempotencyKeyOf } from "../store/idempotency.js";
import type { RecentPages } from "../store/recent-pages.js";
import type { SessionStore } from "../store/sessions.js";
import type { StmWindow } from "./stm-window.js";

export interface MemoryServiceDeps {
  sql: Sql;
  cache: Cache;
  /** Told about stored messages, so that a chain check reads them. */
  chainChecks: Pick<ChainCheckScheduler, "request">;
  /** Absent: payloads are refused with FailedPrecondition. */
  blobStore?: BlobStore;
  embedder: Embedder;
  sessions: SessionStore;
  events: EventStore;
  window: StmWindow;
  recentPages: RecentPages;
  retrieval: Retrieval;
  /** Absent: TriggerGraphAnalytics answers Internal. */
  promoter?: Promoter;
  logger: Logger;
  now?: () => Date;
}

type GetContextResult = MessageInitShape<typeof memoryV1.GetContextResponseSchema>;
const DEFAULT_CONTEXT_LIMIT = 10;
const MAX_CONTEXT_LIMIT = 1000;
const RELEVANT_PAGES = 5;
const DEFAULT_SEARCH_LIMIT = 10;
const MAX_SEARCH_LIMIT = 100;
const ENTITY_FACTS = 5;
const TOUCH_INTERVAL_MS = 5 * 60_000;

type MemoryServiceImpl = ServiceImpl<typeof memoryV1.MemoryService>;

const planned = (operation: string) => () => {
  throw unimplemented(`${operation} is planned and not implemented yet`);
};

function oneOf<T extends string>(field: string, value: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(value)) {
    throw invalidArgument(`${field} ${JSON.stringify(value)} is not one of ${allowed.join(", ")}`);
  }
  return value as T;
}

function toStmEventMessage(e: StmEvent) {
  return {
    role: e.role,
    type: e.type,
    content: e.content,
    timestamp: timestampFromDate(e.timestamp),
    // A copy: GetContext freezes its messages, and the event's own map is not its to freeze.
    metadata:
      e.coalescedCount > 1
        ? { ...e.metadata, coalesced_count: String(e.coalescedCount) }
        : { ...e.metadata },
    blobUri: e.blobUri ?? "",
    blobMimeType: e.blobMimeType ?? "",
  };
}

function toDialoguePage(c: ChainRecord) {
  return {
    id: c.id,
    sessionId: c.sessionId,
    topic: c.topic,
    summary: c.summary,
    timestamp: timestampFromDate(c.lastEventAt),
    metadata: {
      ...c.metadata,
      agent_id: c.scope.agentId,
      status: c.status,
      analysis_method: c.analysisMethod,
      // Provenance: the STM events the chain was built from.
      event_ids: c.eventIds.join(","),
    },
  };
}

function describeFacts(entity: EntityRecord, facts: EntityFact[]): string {
  const relations = facts.map((f) =>
    f.direction === "out" ? `${f.relation} ${f.other}` : `${f.other} ${f.relation} ${entity.name}`,
  );
  const parts = [`${entity.name} (${entity.type})`];
  if (relations.length > 0) parts.push(relations.join("; "));
  parts.push(`mentioned in ${entity.mentions} conversation${entity.mentions === 1 ? "" : "s"}`);
  if (entity.community !== null) {
    parts.push(
      `community ${entity.community}, bridges ${entity.bridgeScore ?? 0} other communities`,
    );
  }
  return parts.join(". ");
}

/** The MemoryService handlers, shared by the gRPC and REST transports. */
export function createMemoryService(
  deps: MemoryServiceDeps,
): Partial<ServiceImpl<typeof memoryV1.MemoryService>> {
  const { sql, cache, chainChecks, blobStore, embedder, sessions, events, window } = deps;
  const { recentPages, retrieval, logger } = deps;
  const now = deps.now ?? (() => new Date());
  // The window and the pages come from the near cache, which hands every caller the same lists
  // while they are unchanged: the context built from a pair of lists is built (and, frozen,
  // written as JSON) once. Lists read straight from the stores are new each time and fall out
  // of the maps with their garbage.
  const contexts = new WeakMap<StmEvent[], WeakMap<ChainRecord[], GetContextResult>>();
  function contextOf(stm: StmEvent[], pages: ChainRecord[]): GetContextResult {
    let byPages = contexts.get(stm);
    if (byPages === undefined) {
      byPages = new WeakMap();
      contexts.set(stm, byPages);
    }
    let context = byPages.get(pages);
    if (context === undefined) {
      context = freezeResult({
        stmEvents: stm.map(toStmEventMessage),
        relevantPages: pages.map(toDialoguePage),
        segments: [],
        ltpm: {
          status: "not_implemented",
          message: "long-term persona memory is planned; use SearchMemory for long-term memory",
        },
      });
      byPages.set(pages, context);
    }
    return context;
  }

  /** The session, or NotFound; with a JWT identity, only the identity's own sessions exist. */
  async function resolveSession(
    sessionId: string,
    context: HandlerContext,
  ): Promise<SessionRecord> {
    const session = await sessions.get(sessionId);
    const identity = context.values.get(identityKey);
    if (
      !session ||
      (identity && (identity.tenantId !== session.tenantId || identity.userId !== session.userId))
    ) {
      throw notFound(`session ${JSON.stringify(sessionId)} not found`);
    }
    return session;
  }

  /** Recall strengthens chains (heat); best effort, off the request path. */
  function touch(chains: ChainRecord[]): void {
    const at = now();
    // A chain read again within minutes has not cooled measurably; skipping the write keeps hot
    // reads (an agent polling its context) from turning into a stream of UPDATEs.
    const due = chains.filter((c) => at.getTime() - c.lastAccessAt.getTime() >= TOUCH_INTERVAL_MS);
    if (due.length === 0) return;
    const updates = due.map((c) => ({ id: c.id, ...recordAccess(c, at) }));
    chainStore
      .setAccess(sql, updates)
      // The cached pages still carry the old access time: without this, every read would
      // write again.
      .then(() => recentPages.invalidate(due.map((c) => c.scope)))
      .catch((error) => logger.warn({ err: error }, "recording chain access failed"));
  }

  const idempotency = createIdempotencyStore(sql);

  /**
   * Stores events of a scope, once per idempotency key when the caller sent one: a repeated key
   * returns the first response and stores nothing (`stored` is then absent).
   */
  async function storeOnce<R>(
    operation: string,
    key: string | undefined,
    session: SessionRecord,
    inputs: NewEvent[],
    respond: (stored: InsertedEvent[]) => R,
  ): Promise<{ response: R; stored?: InsertedEvent[] }> {
    if (key === undefined) {
      const stored = await events.insertAll(inputs);
      return { response: respond(stored), stored };
    }
    const { response, extra } = await idempotency.once(
      { tenantId: session.tenantId, operation, key },
      async (tx) => {
        const stored = await events.insertAllIn(tx, inputs);
        return { response: respond(stored), extra: stored };
      },
    );
    return { response, stored: extra };
  }

  const timestampOr = (t: Timestamp | undefined) => (t ? timestampDate(t) : now());

  async function entityResults(session: SessionRecord, query: string) {
    const owner = { tenantId: session.tenantId, userId: session.userId };
    const mentioned = await graphStore.mentionedIn(sql, owner, query, ENTITY_FACTS);
    // compromise may spot a name the plain match missed (different spacing, possessive).
    for (const e of extractEntities(query)) {
      if (mentioned.length >= ENTITY_FACTS) break;
      for (const found of await graphStore.mentionedIn(sql, owner, e.name, 1)) {
        if (!mentioned.some((m) => m.id === found.id)) mentioned.push(found);
      }
    }
    if (mentioned.length === 0) return [];
    const contents = await Promise.all(
      mentioned.map(async (entity) =>
        describeFacts(entity, await graphStore.facts(sql, entity.id, 10)),
      ),
    );
    const [queryVector, ...vectors] = await embedder.embed([query, ...contents]);
    return mentioned.map((entity, i) => ({
      content: contents[i],
      similarityScore: cosineSimilarity(queryVector, vectors[i]),
      sourceType: "entity",
      sourceId: entity.id,
      timestamp: timestampFromDate(entity.updatedAt),
    }));
  }

  // Annotated complete, so a missing handler is a type error; the host takes a Partial.
  const implementation: MemoryServiceImpl = {
    async createSession(request, context) {
      const identity = context.values.get(identityKey);
      const scope: Scope = identity
        ? { tenantId: identity.tenantId, userId: identity.userId, agentId: identity.agentId ?? "" }
        : {
            tenantId: request.tenantId.trim(),
            userId: request.userId.trim(),
            agentId: request.agentId.trim(),
          };
      if (!scope.tenantId) throw invalidArgument("tenant_id is required");
      if (!scope.userId) throw invalidArgument("user_id is required");
      const session = await sessions.create(scope, request.metadata);
      return { sessionId: session.id, createdAt: timestampFromDate(session.createdAt) };
    },

    getSession: planned("GetSession"),
    deleteSession: planned("DeleteSession"),

    async storeInteraction(request, context) {
      if (!request.userMessage.trim()) throw invalidArgument("user_message is required");
      const session = await resolveSession(request.sessionId, context);
      const timestamp = timestampOr(request.timestamp);
      const metadata = request.metadata;
      const turn: { role: EventRole; content: string }[] = [
        { role: "user", content: request.userMessage },
      ];
      if (request.agentResponse)
        turn.push({ role: "agent" as const, content: request.agentResponse });
      // Both events or neither: a retried request never finds half a turn stored, and with an
      // idempotency key a retried request stores nothing again.
      const { response, stored } = await storeOnce(
        "StoreInteraction",
        idempotencyKeyOf(context.requestHeader),
        session,
        turn.map(({ role, content }) => ({
          sessionId: session.id,
          scope: session,
          role,
          type: "message" as const,
          content,
          metadata,
          timestamp,
        })),
        () => ({ success: true, interactionId: "" }),
      );
      // Both only follow the durable insert, not each other: one cache round trip and, unless
      // a check of the scope is already due or running, one queue round trip, in parallel.
      // The window append never rejects (a cache failure drops the list).
      if (stored) {
        await Promise.all([window.appendAll(session, stored), chainChecks.request(session)]);
      }
      return response;
    },

    async storeEvent(request, context) {
      const role = oneOf("role", request.role || "system", EVENT_ROLES);
      if (!request.type)
        throw invalidArgument(`type is required: one of ${EVENT_TYPES.join(", ")}`);
      const type = oneOf("type", request.type, EVENT_TYPES);
      const hasPayload = request.payload.length > 0;
      if (hasPayload && !request.mimeType)
        throw invalidArgument("mime_type is required when payload is sent");
      const session = await resolveSession(request.sessionId, context);
      if (hasPayload && !blobStore) {
        throw failedPrecondition("payload sent but no blob store is configured (BLOB_STORE_URL)");
      }
      let blob: { uri: string } | undefined;
      if (hasPayload && blobStore) {
        const key = `tenants/${encodeURIComponent(session.tenantId)}/sessions/${session.id}/${randomUUID()}`;
        try {
          blob = await blobStore.put(key, request.payload, request.mimeType);
        } catch (error) {
          throw internal("storing the payload failed", error);
        }
      }
      let outcome: { response: { success: boolean; eventId: string }; stored?: InsertedEvent[] };
      try {
        outcome = await storeOnce(
          "StoreEvent",
          idempotencyKeyOf(context.requestHeader),
          session,
          [
            {
              sessionId: session.id,
              scope: session,
              role,
              type,
              content: request.content,
              metadata: request.metadata,
              timestamp: timestampOr(request.timestamp),
              ...(blob ? { blobUri: blob.uri, blobMimeType: request.mimeType } : {}),
            },
          ],
          ([first]) => ({ success: true, eventId: first.event.id }),
        );
      } catch (error) {
        if (blob) await blobStore?.delete(blob.uri).catch(() => undefined);
        throw error;
      }
      const [inserted] = outcome.stored ?? [];
      if (!inserted) {
        // A retry: the first request's blob is the one its event points to.
        if (blob) await blobStore?.delete(blob.uri).catch(() => undefined);
        return outcome.response;
      }
      await window.append(session, inserted.event, inserted.supersedes);
      if (role === "user" && type === "message") await chainChecks.request(session);
      return outcome.response;
    },

    async getContext(request, context) {
      const limit = request.limit ?? DEFAULT_CONTEXT_LIMIT;
      if (limit < 0) throw invalidArgument("limit must not be negative");
      const session = await resolveSession(request.sessionId, context);
      const relevant = async (): Promise<ChainRecord[]> => {
        if (!request.query.trim()) return recentPages.read(session, RELEVANT_PAGES);
        const found = await retrieval.search({
          ...session,
          text: request.query,
          limit: RELEVANT_PAGES,
        });
        return chainStore.byIds(
          sql,
          found.filter((p) => p.sourceType === "dialogue_page").map((p) => p.sourceId),
        );
      };
      // Started together, so that their cache reads share one pipelined round trip.
      const [stm, pages] = await Promise.all([
        window.read(session, Math.min(limit, MAX_CONTEXT_LIMIT)),
        relevant(),
      ]);
      touch(pages);
      return contextOf(stm, pages);
    },

    async searchMemory(request, context) {
      const query = request.query.trim();
      if (!query) throw invalidArgument("query must not be empty");
      const requested = request.limit ?? 0;
      if (requested < 0) throw invalidArgument("limit must not be negative");
      const limit = Math.min(requested || DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT);
      const session = await resolveSession(request.sessionId, context);
      const filter = request.filter;
      const [pages, facts] = await Promise.all([
        retrieval.search({
          tenantId: session.tenantId,
          userId: session.userId,
          text: query,
          limit,
          filter,
        }),
        // Graph facts carry no chain metadata, so no filter can match them.
        Object.keys(filter).length === 0 ? entityResults(session, query) : [],
      ]);
      const results = pages.map((p) => ({
        content: p.content,
        similarityScore: p.score,
        sourceType: p.sourceType,
        sourceId: p.sourceId,
        timestamp: timestampFromDate(p.timestamp),
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
      // Heat bookkeeping reads the pages' chains: off the request path, like the write.
      const recalled = kept.filter((r) => r.sourceType === "dialogue_page").map((r) => r.sourceId);
      if (recalled.length > 0) {
        chainStore
          .byIds(sql, recalled)
          .then(touch)
          .catch((error) => logger.warn({ err: error }, "recording chain access failed"));
      }
      return { results: returned };
    },

    analyzeTopics: planned("AnalyzeTopics"),
    getHeatMetrics: planned("GetHeatMetrics"),
    getSegments: planned("GetSegments"),

    async healthCheck() {
      const checks: [string, () => Promise<void>][] = [
        ["cache", () => cache.ping()],
        ["database", () => sql.ping()],
      ];
      const dependencies: Record<string, string> = {};
      await Promise.all(
        checks.map(async ([name, check]) => {
          try {
            await check();
            dependencies[name] = "healthy";
          } catch (error) {
            dependencies[name] = `unhealthy: ${(error as Error).message || String(error)}`;
          }
        }),
      );
      const healthy = Object.values(dependencies).every((s) => s === "healthy");
      return {
        status: healthy ? "healthy" : "degraded",
        dependencies,
        timestamp: timestampFromDate(now()),
      };
    },

    async triggerGraphAnalytics() {
      const promoter = deps.promoter;
      if (!promoter) throw internal("the promoter is not initialized");
      promoter
        .runCycle()
        .then((report) => logger.info(report, "graph analytics cycle finished"))
        .catch((error) => logger.error({ err: error }, "graph analytics cycle failed"));
      return {
        success: true,
        message: "graph analytics started: promotion, community detection and bridge scoring",
      };
    },
  };
  return implementation;
}
