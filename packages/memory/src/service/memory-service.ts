import { randomUUID } from "node:crypto";
import type { memoryV1 } from "@atrium/api";
import {
  type BlobStore,
  type Cache,
  failedPrecondition,
  identityKey,
  internal,
  invalidArgument,
  type Logger,
  type Sql,
  unimplemented,
} from "@atrium/kit";
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  EVENT_ROLES,
  EVENT_SOURCES,
  EVENT_TYPES,
  type EventRole,
  type EventSource,
  type Scope,
} from "../domain.js";
import type { Embedder } from "../embeddings/embedder.js";
import type { ChainCheckScheduler } from "../pipeline/chain-check-scheduler.js";
import type { Promoter } from "../pipeline/promoter.js";
import type { Retrieval, RetrievedPage } from "../retrieval/retrieval.js";
import { chainStore } from "../store/chains.js";
import type { EventStore, InsertedEvent } from "../store/events.js";
import { idempotencyKeyOf } from "../store/idempotency.js";
import type { RecentPages } from "../store/recent-pages.js";
import type { SessionStore } from "../store/sessions.js";
import { turnStore } from "../store/turns.js";
import { createChainAccess } from "./chain-access.js";
import { buildContext, createContextMemo, type DialoguePageMessage } from "./context-cache.js";
import { createEntityFacts } from "./entity-facts.js";
import { createEventWrites } from "./event-writes.js";
import type { Forget } from "./forget.js";
import { createMemorySearch, DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT } from "./memory-search.js";
import { toDialoguePage, toPendingPage } from "./proto-messages.js";
import { createSessionAccess } from "./session-access.js";
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
  /** Absent: Forget answers Internal. */
  forget?: Forget;
  logger: Logger;
  now?: () => Date;
}

const DEFAULT_CONTEXT_LIMIT = 10;
const MAX_FORGET_EVENTS = 1000;
const FORGET_SCOPES = ["agent", "user"] as const;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MAX_CONTEXT_LIMIT = 1000;
const RELEVANT_PAGES = 5;
/** What an agent's reply can be: its own words, a tool's output relayed, or memory quoted. */
const AGENT_RESPONSE_SOURCES = ["agent", "tool", "memory"] as const;

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

/** The MemoryService handlers, shared by the gRPC and REST transports. */
export function createMemoryService(
  deps: MemoryServiceDeps,
): Partial<ServiceImpl<typeof memoryV1.MemoryService>> {
  const { sql, cache, chainChecks, blobStore, embedder, sessions, events, window } = deps;
  const { recentPages, retrieval, logger } = deps;
  const now = deps.now ?? (() => new Date());
  const resolveSession = createSessionAccess(sessions);
  const { contextOf } = createContextMemo();
  const chainAccess = createChainAccess({ sql, recentPages, logger, now });
  const search = createMemorySearch({
    retrieval,
    entityFacts: createEntityFacts({ sql, embedder }),
  });
  const writeEvents = createEventWrites({ sql, events, window, chainChecks });

  const timestampOr = (t: Timestamp | undefined) => (t ? timestampDate(t) : now());

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
      const responseSource = oneOf(
        "agent_response_source",
        request.agentResponseSource || "agent",
        AGENT_RESPONSE_SOURCES,
      );
      const turn: { role: EventRole; source: EventSource; content: string }[] = [
        { role: "user", source: "user", content: request.userMessage },
      ];
      if (request.agentResponse)
        turn.push({ role: "agent", source: responseSource, content: request.agentResponse });
      // Both events or neither: a retried request never finds half a turn stored, and with an
      // idempotency key a retried request stores nothing again.
      const { response } = await writeEvents({
        operation: "StoreInteraction",
        key: idempotencyKeyOf(context.requestHeader),
        session,
        inputs: turn.map(({ role, source, content }) => ({
          sessionId: session.id,
          scope: session,
          role,
          source,
          type: "message" as const,
          content,
          metadata,
          timestamp,
        })),
        respond: () => ({ success: true, interactionId: "" }),
      });
      return response;
    },

    async storeEvent(request, context) {
      const role = oneOf("role", request.role || "system", EVENT_ROLES);
      if (!request.type)
        throw invalidArgument(`type is required: one of ${EVENT_TYPES.join(", ")}`);
      const type = oneOf("type", request.type, EVENT_TYPES);
      const source = oneOf("source", request.source || role, EVENT_SOURCES);
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
        outcome = await writeEvents({
          operation: "StoreEvent",
          key: idempotencyKeyOf(context.requestHeader),
          session,
          inputs: [
            {
              sessionId: session.id,
              scope: session,
              role,
              type,
              source,
              content: request.content,
              metadata: request.metadata,
              timestamp: timestampOr(request.timestamp),
              ...(blob ? { blobUri: blob.uri, blobMimeType: request.mimeType } : {}),
            },
          ],
          respond: ([first]) => ({ success: true, eventId: first.event.id }),
        });
      } catch (error) {
        if (blob) await blobStore?.delete(blob.uri).catch(() => undefined);
        throw error;
      }
      // A retry: the first request's blob is the one its event points to.
      if (!outcome.stored && blob) await blobStore?.delete(blob.uri).catch(() => undefined);
      return outcome.response;
    },

    async getContext(request, context) {
      const limit = request.limit ?? DEFAULT_CONTEXT_LIMIT;
      if (limit < 0) throw invalidArgument("limit must not be negative");
      const session = await resolveSession(request.sessionId, context);
      const stmLimit = Math.min(limit, MAX_CONTEXT_LIMIT);
      if (!request.query.trim()) {
        // Started together, so that their cache reads share one pipelined round trip.
        const [stm, pages] = await Promise.all([
          window.read(session, stmLimit),
          recentPages.read(session, RELEVANT_PAGES),
        ]);
        chainAccess.touch(pages);
        return contextOf(stm, pages);
      }
      const relevant = async () => {
        const found = await retrieval.search({
          ...session,
          text: request.query,
          limit: RELEVANT_PAGES,
        });
        const idsOf = (type: RetrievedPage["sourceType"]) =>
          found.filter((p) => p.sourceType === type).map((p) => p.sourceId);
        const [chains, pending] = await Promise.all([
          chainStore.byIds(sql, idsOf("dialogue_page")),
          turnStore.byIds(sql, session, idsOf("message")),
        ]);
        const quotes = new Map(found.map((p) => [p.sourceId, p.content]));
        const byId = new Map<string, DialoguePageMessage>();
        for (const c of chains) byId.set(c.id, toDialoguePage(c));
        for (const t of pending) {
          byId.set(t.eventId, toPendingPage(t, session.agentId, quotes.get(t.eventId) ?? ""));
        }
        // Several matched turns can be in one chain: its page is given once, where it first ranks.
        const pageIds = [...new Set(found.map((p) => p.sourceId))];
        return { chains, pages: pageIds.flatMap((id) => byId.get(id) ?? []) };
      };
      const [stm, { chains, pages }] = await Promise.all([
        window.read(session, stmLimit),
        relevant(),
      ]);
      chainAccess.touch(chains);
      return buildContext(stm, pages);
    },

    async searchMemory(request, context) {
      const query = request.query.trim();
      if (!query) throw invalidArgument("query must not be empty");
      const requested = request.limit ?? 0;
      if (requested < 0) throw invalidArgument("limit must not be negative");
      const limit = Math.min(requested || DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT);
      const session = await resolveSession(request.sessionId, context);
      const { results, recalledChainIds } = await search({
        tenantId: session.tenantId,
        userId: session.userId,
        text: query,
        limit,
        filter: request.filter,
      });
      // Heat bookkeeping reads the pages' chains: off the request path, like the write.
      chainAccess.touchIds(recalledChainIds);
      return { results };
    },

    async forget(request, context) {
      const eventIds = request.eventIds.map((id) => id.trim());
      if (eventIds.length > 0 && request.scope) {
        throw invalidArgument("send either event_ids or scope, not both");
      }
      if (eventIds.length === 0 && !request.scope) {
        throw invalidArgument("event_ids or scope is required: the events, or agent or user");
      }
      if (eventIds.length > MAX_FORGET_EVENTS) {
        throw invalidArgument(`event_ids: at most ${MAX_FORGET_EVENTS} per call`);
      }
      eventIds.forEach((id, i) => {
        if (!UUID.test(id))
          throw invalidArgument(`event_ids[${i}] ${JSON.stringify(id)} is not an event id`);
      });
      const kind = request.scope ? oneOf("scope", request.scope, FORGET_SCOPES) : "events";
      const session = await resolveSession(request.sessionId, context);
      if (!deps.forget) throw internal("forgetting is not configured");
      const owner = { tenantId: session.tenantId, userId: session.userId };
      const identity = context.values.get(identityKey);
      const { id, counts } = await deps.forget({
        target:
          kind === "events"
            ? { kind, ...owner, eventIds }
            : kind === "agent"
              ? { kind, ...owner, agentId: session.agentId }
              : { kind, ...owner },
        requestedBy: identity
          ? `jwt:${[identity.tenantId, identity.userId, identity.agentId ?? ""].join("/")}`
          : `session:${session.id}`,
      });
      return {
        success: true,
        erasureId: id,
        eventsErased: counts.eventsErased,
        chainsErased: counts.chainsErased,
        chainsRebuilt: counts.chainsRebuilt,
        entitiesErased: counts.entitiesErased,
        payloadsErased: counts.payloadsErased,
      };
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
