import { Readable } from "node:stream";
import { brokerV1 } from "@atrium/api";
import { AtriumError, Code } from "@atrium/kit";
import { toJson } from "@bufbuild/protobuf";
import type { FastifyInstance, FastifyReply, FastifySchema } from "fastify";
import type { BrokerClient } from "../broker/broker-client.js";
import { operatorRouteSchemas } from "./operator-schemas.js";

export interface OperatorService {
  /** Base URL the paths below are appended to. */
  url: string;
  apiKey: string | undefined;
}

export interface OperatorRoutesOptions {
  broker: BrokerClient;
  /** The memory service (MEMORY_URL): its `/api/v1/operator/*` routes. */
  memory: OperatorService;
  /** The agent host's chat router (AGENT_CHAT_URL). */
  chat: OperatorService;
  timeoutMs: number;
}

const ids = /^[A-Za-z0-9_-]{1,128}$/;

/**
 * A route's OpenAPI description (operator-schemas.ts), collected by @fastify/swagger. The schemas
 * describe; the handlers check their input (the messages name the field) and pass answers through.
 */
const described = (route: keyof typeof operatorRouteSchemas, url?: string) => ({
  schema: { ...operatorRouteSchemas[route], tags: ["operator"] },
  validatorCompiler: () => () => true,
  serializerCompiler: () => (data: unknown) => JSON.stringify(data),
  // The wildcard's document path names what it stands for.
  ...(url
    ? { config: { swaggerTransform: ({ schema }: { schema: FastifySchema }) => ({ schema, url }) } }
    : {}),
});

/**
 * The console's read-only view of the platform, on the gateway's origin (the console's CSP
 * allows no other) and behind the gateway's inbound key like every /v1 route: providers and the
 * audit log from the broker, workflows and their traces from the agent host, memory from the
 * memory service's operator routes. The gateway holds the keys of those services; the browser
 * never sees them.
 */
export function configureOperatorRoutes(app: FastifyInstance, options: OperatorRoutesOptions) {
  const { broker, memory, chat, timeoutMs } = options;

  app.get("/v1/operator/providers", described("providers"), async (_request, reply) => {
    const answer = await broker.listProviders({});
    return reply.send(toJson(brokerV1.ListProvidersResponseSchema, answer, json));
  });

  app.get<{ Querystring: Record<string, string | undefined> }>(
    "/v1/operator/audit",
    described("audit"),
    async (request, reply) => {
      const { event_type, resource_id, since, until, limit, offset } = request.query;
      const answer = await broker.listAuditEvents({
        eventType: event_type ?? "",
        resourceId: resource_id ?? "",
        since: since ?? "",
        until: until ?? "",
        limit: limit === undefined ? undefined : integer("limit", limit),
        offset: offset === undefined ? 0 : integer("offset", offset),
      });
      return reply.send(toJson(brokerV1.ListAuditEventsResponseSchema, answer, json));
    },
  );

  app.get<{ Querystring: { limit?: string } }>(
    "/v1/operator/workflows",
    described("workflows"),
    (request, reply) =>
      forward(reply, chat, "GET", `/chat/workflows${query({ limit: request.query.limit })}`),
  );

  app.get<{ Params: { workflow_id: string; step_id: string } }>(
    "/v1/operator/workflows/:workflow_id/steps/:step_id",
    described("step"),
    (request, reply) => {
      const { workflow_id, step_id } = request.params;
      traceIds(workflow_id, step_id);
      return forward(reply, chat, "GET", `/chat/history/${workflow_id}/${step_id}`);
    },
  );

  app.get<{ Querystring: { limit?: string; cursor?: string } }>(
    "/v1/operator/approvals",
    described("approvals"),
    (request, reply) => {
      const { limit, cursor } = request.query;
      const filter = { status: "yielded", pending: "approval", limit, cursor };
      return forward(reply, chat, "GET", `/chat/runs${query(filter)}`);
    },
  );

  app.post<{ Params: { workflow_id: string; step_id: string }; Body: unknown }>(
    "/v1/operator/approvals/:workflow_id/:step_id",
    described("decide"),
    (request, reply) => {
      const { workflow_id, step_id } = request.params;
      traceIds(workflow_id, step_id);
      const { approval, pause } = (request.body ?? {}) as Record<string, unknown>;
      if (approval !== "approve" && approval !== "deny") {
        throw new AtriumError(Code.InvalidArgument, "approval must be approve or deny");
      }
      if (!Number.isInteger(pause) || (pause as number) < 0) {
        throw new AtriumError(Code.InvalidArgument, "pause must be a non-negative integer");
      }
      // In the background: the console must not hold a request open while the step runs on.
      return forward(reply, chat, "POST", `/chat/runs/${workflow_id}/${step_id}/resume`, {
        approval,
        pause,
        background: true,
      });
    },
  );

  app.get<{ Params: { workflow_id: string; step_id: string } }>(
    "/v1/operator/runs/:workflow_id/:step_id",
    described("run"),
    (request, reply) => {
      const { workflow_id, step_id } = request.params;
      traceIds(workflow_id, step_id);
      return forward(reply, chat, "GET", `/chat/runs/${workflow_id}/${step_id}`);
    },
  );

  app.get<{ Params: { workflow_id: string } }>(
    "/v1/operator/workflows/:workflow_id/stream",
    described("stream"),
    async (request, reply) => {
      traceIds(request.params.workflow_id);
      const lastEventId = request.headers["last-event-id"];
      const upstream = new AbortController();
      request.raw.on("close", () => upstream.abort());
      let response: Response;
      try {
        response = await fetch(`${chat.url}/chat/stream/${request.params.workflow_id}`, {
          headers: {
            accept: "text/event-stream",
            ...auth(chat),
            ...(typeof lastEventId === "string" ? { "last-event-id": lastEventId } : {}),
          },
          signal: upstream.signal,
        });
      } catch {
        throw unreachable("the agent host", chat.url);
      }
      if (!response.ok || response.body === null) return passThrough(reply, response);
      // A live stream: relayed as it comes, and closed upstream when the console goes away.
      reply.raw.writeHead(200, {
        "content-type": "text/event-stream",
        "cache-control": "no-store",
        "x-accel-buffering": "no",
      });
      reply.hijack();
      // The console learns the stream is open now, not at the first event (maybe seconds away).
      reply.raw.flushHeaders();
      const events = Readable.fromWeb(response.body as import("node:stream/web").ReadableStream);
      events.on("error", () => reply.raw.end());
      events.pipe(reply.raw);
    },
  );

  app.get<{ Params: { "*": string }; Querystring: Record<string, string> }>(
    "/v1/operator/memory/*",
    described("memoryView", "/v1/operator/memory/{view}"),
    (request, reply) => {
      const path = request.params["*"];
      if (!/^[a-z-]+$/.test(path)) {
        throw new AtriumError(Code.NotFound, `no operator memory view "${path}"`);
      }
      return forward(reply, memory, "GET", `/api/v1/operator/${path}${query(request.query)}`);
    },
  );

  app.post("/v1/operator/memory/search", described("memorySearch"), (request, reply) =>
    forward(reply, memory, "POST", "/api/v1/operator/search", request.body),
  );

  app.post("/v1/operator/memory/forget", described("memoryForget"), (request, reply) =>
    forward(reply, memory, "POST", "/api/v1/operator/forget", request.body),
  );

  async function forward(
    reply: FastifyReply,
    service: OperatorService,
    method: string,
    path: string,
    body?: unknown,
  ) {
    let response: Response;
    try {
      response = await fetch(`${service.url}${path}`, {
        method,
        headers: {
          accept: "application/json",
          ...auth(service),
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch {
      throw unreachable(service === memory ? "the memory service" : "the agent host", service.url);
    }
    return passThrough(reply, response);
  }
}

const json = { useProtoFieldName: true } as const;

const auth = (service: OperatorService): Record<string, string> =>
  service.apiKey ? { "x-api-key": service.apiKey } : {};

async function passThrough(reply: FastifyReply, response: Response) {
  const text = await response.text();
  return reply
    .code(response.status)
    .type(response.headers.get("content-type") ?? "application/json")
    .send(text);
}

function query(values: Record<string, string | undefined>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(values))
    if (value !== undefined) params.set(name, value);
  const text = params.toString();
  return text ? `?${text}` : "";
}

function integer(field: string, value: string): number {
  if (!/^\d{1,9}$/.test(value)) {
    throw new AtriumError(Code.InvalidArgument, `${field} must be a whole number`);
  }
  return Number(value);
}

function traceIds(...values: string[]): void {
  if (!values.every((value) => ids.test(value))) {
    throw new AtriumError(Code.InvalidArgument, "workflow_id and step_id must match [A-Za-z0-9_-]");
  }
}

const unreachable = (what: string, url: string) =>
  new AtriumError(Code.Unavailable, `${what} at ${url} could not be reached`);
