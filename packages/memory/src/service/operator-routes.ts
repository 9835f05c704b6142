import {
  AtriumError,
  Code,
  invalidArgument,
  notFound,
  requestIdentity,
  type Sql,
} from "@atrium/kit";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { heat } from "../chains/heat.js";
import type { Embedder } from "../embeddings/embedder.js";
import type { Retrieval } from "../retrieval/retrieval.js";
import { chainStore } from "../store/chains.js";
import type { EventStore } from "../store/events.js";
import { graphStore } from "../store/graph.js";
import { turnStore } from "../store/turns.js";
import { userStore } from "../store/users.js";
import { createEntityFacts } from "./entity-facts.js";
import type { Forget } from "./forget.js";
import { createMemorySearch, DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT } from "./memory-search.js";
import { operatorRouteSchemas } from "./operator-schemas.js";

export interface OperatorRoutesOptions {
  sql: Sql;
  events: EventStore;
  retrieval: Retrieval;
  embedder: Embedder;
  /** Events shown per scope: the STM window's size (MEMORY_STM_CACHE_SIZE). */
  stmWindowSize: number;
  /** Absent: the erasure route answers 404. */
  forget?: Forget;
  now?: () => Date;
}

/** Bounds on what one answer carries, so an operator's page stays one quick read. */
const MAX_USERS = 200;
const SESSIONS_PER_AGENT = 100;
const MAX_CHAINS = 100;
const MAX_ENTITIES = 300;
const ENTITY_FACTS = 50;

/** Where the operator routes are mounted (their document: openapi/memory.operator.openapi.json). */
export const operatorPrefix = "/api/v1/operator";
const prefix = operatorPrefix;

/** A route's OpenAPI description (operator-schemas.ts), collected by @fastify/swagger. */
const described = (route: keyof typeof operatorRouteSchemas) => ({
  schema: { ...operatorRouteSchemas[route], tags: ["operator"] },
});

type Fields = Record<string, unknown>;

/** A required text field: 400 naming it when it is missing, blank or not a single string. */
function required(fields: Fields, name: string): string {
  const value = fields[name] ?? "";
  if (typeof value !== "string") throw invalidArgument(`${name} must be a single string`);
  const text = value.trim();
  if (!text) throw invalidArgument(`${name} is required`);
  return text;
}

function searchLimit(value: unknown): number {
  if (value === undefined || value === null) return DEFAULT_SEARCH_LIMIT;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1) {
    throw invalidArgument("limit must be a positive integer");
  }
  return Math.min(value, MAX_SEARCH_LIMIT);
}

const owner = (fields: Fields) => ({
  tenantId: required(fields, "tenant_id"),
  userId: required(fields, "user_id"),
});

const iso = (date: Date | null) => (date ? date.toISOString() : null);

/**
 * Read-only operator views of the memory a user has (issue 19's console Memory page, reached
 * through the gateway). They sit behind the service's authenticator like every route; a caller
 * that authenticated as a JWT identity is one end user, not an operator, and is refused.
 */
export async function registerOperatorRoutes(
  app: FastifyInstance,
  options: OperatorRoutesOptions,
): Promise<void> {
  const { sql, events, stmWindowSize } = options;
  const now = options.now ?? (() => new Date());
  const search = createMemorySearch({
    retrieval: options.retrieval,
    entityFacts: createEntityFacts({ sql, embedder: options.embedder }),
  });

  await app.register(async (operator) => {
    // The route schemas describe; the handlers validate (their messages name the field) and
    // answer open-keyed objects (event metadata) that a schema serializer would strip.
    operator.setValidatorCompiler(() => () => true);
    operator.setSerializerCompiler(() => (data) => JSON.stringify(data));
    // onRequest of this scope runs after the host's authentication, before body and input checks.
    operator.addHook("onRequest", async (request) => {
      if (requestIdentity(request)) {
        throw new AtriumError(
          Code.PermissionDenied,
          "operator routes are not open to a JWT identity (an end user's token)",
        );
      }
    });

    const query = (request: FastifyRequest) => request.query as Fields;

    operator.get(`${prefix}/users`, described("users"), async (request) => {
      const tenantId = required(query(request), "tenant_id");
      const users = await userStore.list(sql, tenantId, MAX_USERS);
      return {
        users: users.map((u) => ({
          user_id: u.userId,
          agents: u.agents,
          sessions: u.sessions,
          last_event_at: iso(u.lastEventAt),
        })),
      };
    });

    operator.get(`${prefix}/user`, described("user"), async (request) => {
      const user = owner(query(request));
      const [sessions, chains] = await Promise.all([
        userStore.sessions(sql, user, SESSIONS_PER_AGENT),
        chainStore.ofUser(sql, user, MAX_CHAINS),
      ]);
      const agents = [...new Set(sessions.map((s) => s.agentId))].sort();
      const [windows, turns] = await Promise.all([
        Promise.all(agents.map((agentId) => events.newest({ ...user, agentId }, stmWindowSize))),
        turnStore.ofChains(
          sql,
          user,
          chains.map((c) => c.id),
        ),
      ]);
      const at = now();
      return {
        scopes: agents.map((agentId, i) => ({
          agent_id: agentId,
          sessions: sessions
            .filter((s) => s.agentId === agentId)
            .map((s) => ({ id: s.id, created_at: iso(s.createdAt) })),
          stm: windows[i].map((e) => ({
            id: e.id,
            role: e.role,
            type: e.type,
            content: e.content,
            timestamp: iso(e.timestamp),
            metadata: e.metadata,
          })),
        })),
        chains: chains.map((c) => ({
          id: c.id,
          agent_id: c.scope.agentId,
          topic: c.topic,
          summary: c.summary,
          status: c.status,
          heat: heat(c, at),
          last_event_at: iso(c.lastEventAt),
          turns: (turns.get(c.id) ?? []).map((t) => ({
            id: t.eventId,
            role: t.role,
            content: t.content,
            at: iso(t.occurredAt),
          })),
        })),
      };
    });

    operator.get(`${prefix}/graph`, described("graph"), async (request) => {
      const user = owner(query(request));
      const entities = await graphStore.entities(sql, user, MAX_ENTITIES);
      const edges = await graphStore.edgesAmong(
        sql,
        user,
        entities.map((e) => e.id),
      );
      return {
        nodes: entities.map((e) => ({
          id: e.id,
          name: e.name,
          type: e.type,
          community: e.community,
          bridge_score: e.bridgeScore,
          mentions: e.mentions,
        })),
        edges,
      };
    });

    operator.get(`${prefix}/entity`, described("entity"), async (request) => {
      const fields = query(request);
      const user = owner(fields);
      const id = required(fields, "id");
      const entity = await graphStore.entity(sql, user, id);
      if (!entity) throw notFound(`entity ${JSON.stringify(id)} not found for this user`);
      const facts = await graphStore.facts(sql, entity.id, ENTITY_FACTS);
      return {
        entity: {
          id: entity.id,
          name: entity.name,
          type: entity.type,
          community: entity.community,
          bridge_score: entity.bridgeScore,
          mentions: entity.mentions,
          updated_at: iso(entity.updatedAt),
        },
        facts,
      };
    });

    const forget = options.forget;
    if (forget) {
      // The console's erasure: a user across agents, or one agent of a user (agent_id given,
      // "" for the sessions that named none).
      operator.post(`${prefix}/forget`, described("forget"), async (request) => {
        const body = (request.body ?? {}) as Fields;
        if (typeof body !== "object" || Array.isArray(body)) {
          throw invalidArgument("the request body must be a JSON object");
        }
        const user = owner(body);
        const agentId = body.agent_id;
        if (agentId !== undefined && typeof agentId !== "string") {
          throw invalidArgument("agent_id must be a single string");
        }
        const { id, counts } = await forget({
          target:
            agentId === undefined
              ? { kind: "user", ...user }
              : { kind: "agent", ...user, agentId: agentId.trim() },
          requestedBy: "operator",
        });
        return {
          erasure_id: id,
          events_erased: counts.eventsErased,
          chains_erased: counts.chainsErased,
          chains_rebuilt: counts.chainsRebuilt,
          entities_erased: counts.entitiesErased,
          payloads_erased: counts.payloadsErased,
        };
      });
    }

    operator.post(`${prefix}/search`, described("search"), async (request) => {
      const body = (request.body ?? {}) as Fields;
      if (typeof body !== "object" || Array.isArray(body)) {
        throw invalidArgument("the request body must be a JSON object");
      }
      const user = owner(body);
      const text = required(body, "query");
      const { results } = await search({
        ...user,
        text,
        limit: searchLimit(body.limit),
        filter: {},
        explain: true,
      });
      return {
        results: results.map((r) => ({
          content: r.content,
          score: r.similarityScore,
          source_type: r.sourceType,
          source_id: r.sourceId,
          timestamp: iso(timestampDate(r.timestamp)),
          lexical_rank: r.ranks?.lexical ?? null,
          vector_rank: r.ranks?.vector ?? null,
        })),
      };
    });
  });
}
