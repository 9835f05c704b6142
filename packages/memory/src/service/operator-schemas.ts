import { restErrorBodySchema } from "@atrium/kit";
import type { FastifySchema } from "fastify";

/*
 * JSON Schemas of memory's operator routes (operator-routes.ts), for @fastify/swagger to collect
 * into openapi/memory.operator.openapi.json. The routes do not validate or serialize with them:
 * their own checks name the field, and event metadata has an open key set.
 */

const failure = (description: string) => ({ ...restErrorBodySchema, description });

/** Every operator route passes the host's authenticator, then refuses a JWT identity. */
const refused = {
  400: failure("InvalidArgument: a field is missing or malformed; the message names it."),
  401: failure("Unauthenticated: credentials are missing or not valid (when auth is on)."),
  403: failure("PermissionDenied: the caller authenticated as a JWT identity (an end user)."),
  503: failure("Unavailable: the database or cache cannot be reached; retry with backoff."),
};
const withBody = {
  ...refused,
  413: failure("The request body is larger than the service accepts (`bodyLimit`)."),
};

const text = { type: "string" };
const time = { type: "string", format: "date-time", nullable: true };
const tenant = { ...text, description: "The tenant." };
const user = { ...text, description: "The user whose memory is shown." };
const ownerQuery = {
  type: "object",
  required: ["tenant_id", "user_id"],
  properties: { tenant_id: tenant, user_id: user },
};
const object = (required: string[], properties: Record<string, unknown>) => ({
  type: "object",
  required,
  properties,
});

const entity = {
  id: text,
  name: text,
  type: text,
  community: { type: "integer", nullable: true },
  bridge_score: { type: "number" },
  mentions: { type: "integer" },
};

export const operatorRouteSchemas = {
  users: {
    operationId: "listMemoryUsers",
    summary: "List a tenant's users with memory",
    querystring: object(["tenant_id"], { tenant_id: tenant }),
    response: {
      200: {
        description: "At most 200 users, most recently active first.",
        ...object(["users"], {
          users: {
            type: "array",
            items: object(["user_id", "agents", "sessions", "last_event_at"], {
              user_id: text,
              agents: { type: "array", items: text },
              sessions: { type: "integer" },
              last_event_at: time,
            }),
          },
        }),
      },
      ...refused,
    },
  },
  user: {
    operationId: "readMemoryUser",
    summary: "Read one user's sessions, STM windows and chains",
    querystring: ownerQuery,
    response: {
      200: {
        description: "Per agent its sessions and STM window; the user's chains with their turns.",
        ...object(["scopes", "chains"], {
          scopes: {
            type: "array",
            items: object(["agent_id", "sessions", "stm"], {
              agent_id: text,
              sessions: {
                type: "array",
                items: object(["id", "created_at"], { id: text, created_at: time }),
              },
              stm: {
                type: "array",
                items: object(["id", "role", "type", "content", "timestamp"], {
                  id: text,
                  role: text,
                  type: text,
                  content: text,
                  timestamp: time,
                  metadata: { type: "object", additionalProperties: true },
                }),
              },
            }),
          },
          chains: {
            type: "array",
            items: object(["id", "agent_id", "topic", "summary", "status", "heat", "turns"], {
              id: text,
              agent_id: text,
              topic: text,
              summary: text,
              status: text,
              heat: { type: "number" },
              last_event_at: time,
              turns: {
                type: "array",
                items: object(["id", "role", "content", "at"], {
                  id: text,
                  role: text,
                  content: text,
                  at: time,
                }),
              },
            }),
          },
        }),
      },
      ...refused,
    },
  },
  graph: {
    operationId: "readMemoryGraph",
    summary: "Read a user's knowledge graph",
    querystring: ownerQuery,
    response: {
      200: {
        description: "At most 300 entities and the edges among them.",
        ...object(["nodes", "edges"], {
          nodes: { type: "array", items: object(["id", "name", "type"], entity) },
          edges: {
            type: "array",
            items: { type: "object", additionalProperties: true },
          },
        }),
      },
      ...refused,
    },
  },
  entity: {
    operationId: "readMemoryEntity",
    summary: "Read one entity of a user's graph with its facts",
    querystring: object(["tenant_id", "user_id", "id"], {
      tenant_id: tenant,
      user_id: user,
      id: { ...text, description: "The entity's id." },
    }),
    response: {
      200: {
        description: "The entity and at most 50 facts about it.",
        ...object(["entity", "facts"], {
          entity: object(["id", "name", "type"], { ...entity, updated_at: time }),
          facts: { type: "array", items: { type: "object", additionalProperties: true } },
        }),
      },
      ...refused,
      404: failure("NotFound: the user has no entity with that id."),
    },
  },
  forget: {
    operationId: "forgetMemoryUser",
    summary: "Erase a user's memory, or one agent's of it",
    description:
      "Erases the user's events across agents, or one agent's (`agent_id`, `\"\"` for sessions " +
      "that named none), and everything derived from them; audited as an operator erasure.",
    body: object(["tenant_id", "user_id"], {
      tenant_id: tenant,
      user_id: user,
      agent_id: { ...text, description: "Only this agent's memory of the user." },
    }),
    response: {
      200: {
        description: "What was erased.",
        ...object(
          [
            "erasure_id",
            "events_erased",
            "chains_erased",
            "chains_rebuilt",
            "entities_erased",
            "payloads_erased",
          ],
          {
            erasure_id: text,
            events_erased: { type: "integer" },
            chains_erased: { type: "integer" },
            chains_rebuilt: { type: "integer" },
            entities_erased: { type: "integer" },
            payloads_erased: { type: "integer" },
          },
        ),
      },
      ...withBody,
      404: failure("NotFound: this deployment has no erasure (the route is not served)."),
    },
  },
  search: {
    operationId: "searchMemoryUser",
    summary: "Search a user's memory, with each result's ranks",
    body: object(["tenant_id", "user_id", "query"], {
      tenant_id: tenant,
      user_id: user,
      query: text,
      limit: { type: "integer", minimum: 1, description: "Capped at the search's maximum." },
    }),
    response: {
      200: {
        description: "Results best first, with their lexical and vector ranks.",
        ...object(["results"], {
          results: {
            type: "array",
            items: object(["content", "score", "source_type", "source_id", "timestamp"], {
              content: text,
              score: { type: "number" },
              source_type: text,
              source_id: text,
              timestamp: time,
              lexical_rank: { type: "integer", nullable: true },
              vector_rank: { type: "integer", nullable: true },
            }),
          },
        }),
      },
      ...withBody,
    },
  },
} satisfies Record<string, FastifySchema & { operationId: string; summary: string }>;
