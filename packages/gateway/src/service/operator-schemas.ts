import { restErrorBodySchema } from "@atrium/kit";
import type { FastifySchema } from "fastify";

/*
 * JSON Schemas of the gateway's operator routes (operator-routes.ts), for @fastify/swagger to
 * collect into openapi/gateway.operator.openapi.json. The routes do not validate or serialize
 * with them: their own checks name the field, and the answers they forward are passed through.
 */

const failure = (description: string) => ({ ...restErrorBodySchema, description });

/** The agent host's own error body, which the workflow routes pass through. */
const chatFailure = (description: string) => ({
  description,
  type: "object",
  required: ["error"],
  properties: { error: { type: "string" } },
});

/** Every operator route passes the caller address check and, when keys are required, the key. */
const refused = {
  400: failure("InvalidArgument: a parameter is malformed; the message names it."),
  401: failure("Unauthenticated: no `X-API-Key` (with `GATEWAY_REQUIRE_API_KEY=true`)."),
  403: failure("PermissionDenied: a wrong key, or a caller outside `ALLOWED_CIDRS`."),
  503: failure("Unavailable: the broker, memory service or agent host cannot be reached."),
};
const withBody = {
  ...refused,
  413: failure("The request body is larger than the gateway accepts (`bodyLimit`)."),
};

const text = { type: "string" };
const open = (description: string) => ({
  description,
  type: "object",
  additionalProperties: true,
});
const traceId = { type: "string", pattern: "^[A-Za-z0-9_-]{1,128}$" };
/** The path of one step: `/{workflow_id}/{step_id}`. */
const stepParams = {
  type: "object",
  required: ["workflow_id", "step_id"],
  properties: { workflow_id: traceId, step_id: traceId },
};
const tenant = { ...text, description: "The tenant." };
const user = { ...text, description: "The user whose memory is shown." };

/** Passed through from memory's operator routes (openapi/memory.operator.openapi.json). */
const fromMemory = (route: string) =>
  open(`Memory's answer, as its operator route \`${route}\` gives it (memory.operator document).`);

export const operatorRouteSchemas = {
  providers: {
    operationId: "listOperatorProviders",
    summary: "List the broker's providers",
    response: {
      200: open("The broker's ListProviders answer (openapi/broker.v1.openapi.json)."),
      ...refused,
    },
  },
  audit: {
    operationId: "listOperatorAuditEvents",
    summary: "Read the broker's audit log",
    querystring: {
      type: "object",
      properties: {
        event_type: text,
        resource_id: text,
        since: { ...text, description: "RFC 3339 time." },
        until: { ...text, description: "RFC 3339 time." },
        limit: { type: "integer", minimum: 0 },
        offset: { type: "integer", minimum: 0 },
      },
    },
    response: {
      200: open("The broker's ListAuditEvents answer (openapi/broker.v1.openapi.json)."),
      ...refused,
    },
  },
  workflows: {
    operationId: "listOperatorWorkflows",
    summary: "List the agent host's recent workflows",
    querystring: {
      type: "object",
      properties: { limit: { type: "integer", minimum: 1, maximum: 500 } },
    },
    response: {
      200: open("The agent host's `GET /chat/workflows` answer (chat document)."),
      ...refused,
    },
  },
  step: {
    operationId: "readOperatorStepTraces",
    summary: "Read the trace events of one step",
    params: stepParams,
    response: {
      200: open("The agent host's `GET /chat/history/...` answer (chat document)."),
      ...refused,
      404: chatFailure("The agent host has no trace of that step (its `{error}` body)."),
    },
  },
  approvals: {
    operationId: "listOperatorApprovals",
    summary: "List the steps waiting for a person's approval",
    description:
      "The agent host's `GET /chat/runs?status=yielded&pending=approval`: newest pause first, " +
      "with what is asked, the draft, who asked and when.",
    querystring: {
      type: "object",
      properties: {
        limit: { type: "integer", minimum: 1, maximum: 200 },
        cursor: { ...text, description: "The `next_cursor` of the previous page." },
      },
    },
    response: {
      200: open("The agent host's `GET /chat/runs` answer (chat document)."),
      ...refused,
    },
  },
  decide: {
    operationId: "decideOperatorApproval",
    summary: "Approve or deny a waiting step",
    description:
      "Resumes the step in the background with the decision (the agent host's " +
      "`POST /chat/runs/{workflow_id}/{step_id}/resume`), which the host records on the run; " +
      "read the outcome with the run route.",
    params: stepParams,
    body: {
      type: "object",
      required: ["approval", "pause"],
      properties: {
        approval: { type: "string", enum: ["approve", "deny"] },
        pause: { type: "integer", minimum: 0, description: "The pause the decision answers." },
      },
    },
    response: {
      202: open(
        "Accepted: an approved step resumed in the background, a denied one ended as failed.",
      ),
      ...withBody,
      404: chatFailure("The agent host has no run of that step (its `{error}` body)."),
      409: chatFailure("The step is no longer waiting for that pause (decided already, ended)."),
    },
  },
  run: {
    operationId: "readOperatorRun",
    summary: "Read a step's run status, with its audited decisions",
    params: stepParams,
    response: {
      200: open(
        "The agent host's `GET /chat/runs/{workflow_id}/{step_id}` answer (chat document).",
      ),
      ...refused,
      404: chatFailure("The agent host has no run of that step (its `{error}` body)."),
    },
  },
  stream: {
    operationId: "streamOperatorTraces",
    summary: "Follow a workflow's trace events (SSE)",
    description:
      "Relays the agent host's `GET /chat/stream/{workflow_id}` as it comes, `Last-Event-ID` " +
      "included, and closes it upstream when the caller leaves.",
    params: { type: "object", required: ["workflow_id"], properties: { workflow_id: traceId } },
    response: {
      200: {
        description: "Server-Sent Events; each `data:` line is a trace event as JSON.",
        content: { "text/event-stream": { schema: text } },
      },
      ...refused,
    },
  },
  memoryView: {
    operationId: "readOperatorMemoryView",
    summary: "Read one of memory's operator views",
    description:
      "Forwards to memory's `GET /api/v1/operator/{view}` with the same query; see the " +
      "memory.operator document for each view's parameters and answer.",
    params: {
      type: "object",
      required: ["view"],
      properties: { view: { type: "string", enum: ["users", "user", "graph", "entity"] } },
    },
    querystring: {
      type: "object",
      properties: {
        tenant_id: tenant,
        user_id: user,
        id: { ...text, description: "The entity's id (`entity`)." },
      },
    },
    response: {
      200: fromMemory("GET /api/v1/operator/{view}"),
      ...refused,
      404: failure("NotFound: no such view, or (`entity`) no such entity."),
    },
  },
  memorySearch: {
    operationId: "searchOperatorMemory",
    summary: "Search a user's memory, with each result's ranks",
    body: {
      type: "object",
      required: ["tenant_id", "user_id", "query"],
      properties: { tenant_id: tenant, user_id: user, query: text, limit: { type: "integer" } },
    },
    response: { 200: fromMemory("POST /api/v1/operator/search"), ...withBody },
  },
  memoryForget: {
    operationId: "forgetOperatorMemory",
    summary: "Erase a user's memory, or one agent's of it",
    body: {
      type: "object",
      required: ["tenant_id", "user_id"],
      properties: { tenant_id: tenant, user_id: user, agent_id: text },
    },
    response: {
      200: fromMemory("POST /api/v1/operator/forget"),
      ...withBody,
      404: failure("NotFound: the memory service has no erasure."),
    },
  },
} satisfies Record<string, FastifySchema & { operationId: string; summary: string }>;
