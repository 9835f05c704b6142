import { AtriumError } from "@atrium/kit";
import type { FastifyPluginAsync, FastifyReply, FastifySchema } from "fastify";
import type { ChatKernel } from "../kernel/kernel-types.js";
import {
  type ConsentWatch,
  type ConsentWatchOptions,
  createConsentWatch,
} from "../runs/consent-watch.js";
import {
  createRunManager,
  RunConflictError,
  RunKernelError,
  type RunManager,
  RunNotFoundError,
  type RunResult,
} from "../runs/run-manager.js";
import type { RunRecord } from "../runs/run-store.js";
import { isValidTraceId } from "../trace/trace-event.js";
import { TraceHistoryError } from "../trace/trace-store.js";
import { withStepEvents } from "../webhooks/run-events.js";
import type { WebhookOutbox } from "../webhooks/webhook-outbox.js";
import { parseChatRequest, parseResumeRequest } from "./chat-request.js";
import type { ChatResponse } from "./chat-response.js";
import { chatRouteSchemas } from "./chat-schemas.js";
import { assertFrameworkAvailable } from "./framework.js";
import { serveTraceStream, type TraceStreamHandle } from "./trace-stream.js";
import { callerOf, cursorOf, parseYieldedQuery, yieldedView } from "./waiting-runs.js";

export interface ChatRouterOptions {
  /** Extra prefix inside the router, independent of the host's mount prefix. Default "". */
  prefix?: string;
  /** OpenAPI tags of the routes. Default ["chat"]. */
  tags?: string[];
  /** Stream inactivity timeout; every event resets it. Default 300 s. */
  streamTimeoutMs?: number;
  /** Longest a stream sleeps before writing a heartbeat comment. Default 15 s. */
  heartbeatMs?: number;
  /** Told about failures that clients only see as a generic error. */
  onError?: (error: unknown, context: string) => void;
  /**
   * How long this host's claim on a running step holds without a heartbeat: a host that died
   * mid-step leaves the step `failed` this long after. Default 30 s.
   */
  runLeaseMs?: number;
  /** Where each step's end or pause is recorded for the chat webhook (chat.step.*); none without. */
  stepEvents?: WebhookOutbox;
  /** With the gateway: steps that yielded for a consent resume once the connection is active. */
  consent?: Omit<ConsentWatchOptions, "manager" | "onError">;
}

export const defaultStreamTimeoutMs = 300_000;
export const defaultHeartbeatMs = 15_000;

function normalizePrefix(prefix: string): string {
  const trimmed = prefix.replace(/\/+$/, "");
  if (trimmed === "") return "";
  return trimmed.startsWith("/") ? trimmed : `/${trimmed}`;
}

function parseLastEventId(header: unknown, query: unknown): number {
  const raw = typeof header === "string" && header !== "" ? header : query;
  if (typeof raw !== "string" || !/^\d{1,15}$/.test(raw)) return 0;
  return Number(raw);
}

const sendError = (reply: FastifyReply, status: number, body: Record<string, unknown>) =>
  reply.code(status).header("cache-control", "no-store").send(body);

/** A run as GET /chat/runs/… shows it: no request context, no kernel checkpoint. */
export function runView(run: RunRecord): Record<string, unknown> {
  return {
    workflow_id: run.workflow_id,
    step_id: run.step_id,
    status: run.status,
    pause: run.pauses,
    ...(run.status === "yielded" ? { pending: run.response?.pending ?? [] } : {}),
    ...(run.reason ? { reason: run.reason } : {}),
    ...(run.response ? { response: run.response } : {}),
    ...(run.decisions ? { decisions: run.decisions } : {}),
    host: run.owner ?? null,
    cancel_requested: run.cancel_requested,
    ...(run.lease_expires_at ? { lease_expires_at: run.lease_expires_at } : {}),
    created_at: run.created_at,
    updated_at: run.updated_at,
  };
}

function chatResponseOf(result: RunResult, elapsedMs: number): ChatResponse {
  const { run, response } = result;
  return {
    workflow_id: run.workflow_id,
    step_id: run.step_id,
    status: response.status,
    answer: response.answer,
    sources: response.sources,
    tokens: response.tokens,
    elapsed_ms: elapsedMs,
    ...(response.status === "yield" ? { pending: response.pending ?? [] } : {}),
  };
}

function conflictBody(error: RunConflictError): Record<string, unknown> {
  return {
    error: error.message,
    ...(error.run
      ? { workflow_id: error.run.workflow_id, step_id: error.run.step_id, status: error.run.status }
      : {}),
  };
}

const requestOf = (chat: ReturnType<typeof parseChatRequest>) => ({
  message: chat.message,
  agent_id: chat.agentId,
  system_prompt: chat.systemPrompt,
  context: chat.context,
});

/**
 * The chat router as a Fastify plugin: POST /chat, GET /chat/stream/{workflow_id},
 * GET /chat/history/{workflow_id}/{step_id}. It keeps no state of its own beyond the streams
 * it is serving, so one kernel can be mounted under several prefixes.
 */
export function createChatRouter(
  kernel: ChatKernel,
  options: ChatRouterOptions = {},
): FastifyPluginAsync {
  assertFrameworkAvailable();
  const prefix = normalizePrefix(options.prefix ?? "");
  const tags = options.tags ?? ["chat"];
  const streamTimeoutMs = options.streamTimeoutMs ?? defaultStreamTimeoutMs;
  const heartbeatMs = Math.min(options.heartbeatMs ?? defaultHeartbeatMs, defaultHeartbeatMs);
  const onError = options.onError ?? (() => {});
  const bus = kernel.traceBus;
  // The OpenAPI description of each route (chat-schemas.ts), for hosts that collect one.
  const docs = (route: keyof typeof chatRouteSchemas): FastifySchema => ({
    ...chatRouteSchemas[route],
    tags,
  });

  return async (app) => {
    // The route schemas describe; the handlers validate (their messages name the field) and
    // answer open-keyed objects (tokens, event data) that a schema serializer would strip.
    app.setValidatorCompiler(() => () => true);
    app.setSerializerCompiler(() => (data) => JSON.stringify(data));
    const streams = new Set<TraceStreamHandle>();
    // Made at the first run, so that describing the routes needs no store.
    let manager: RunManager | undefined;
    const runs = () => {
      manager ??= createRunManager({
        kernel,
        store: options.stepEvents
          ? withStepEvents(bus.store.runs, options.stepEvents, onError)
          : bus.store.runs,
        leaseMs: options.runLeaseMs,
        onError,
      });
      return manager;
    };
    // Hijacked SSE responses would otherwise hold the server open on shutdown.
    app.addHook("preClose", async () => {
      for (const stream of streams) stream.shutdown();
    });
    // Started with the server, so that a restarted host fails the steps its predecessor left.
    let consentWatch: ConsentWatch | undefined;
    app.addHook("onReady", async () => {
      if (bus.store) runs();
      if (options.consent) {
        consentWatch = createConsentWatch({ ...options.consent, manager: runs(), onError });
        consentWatch.start();
      }
    });
    app.addHook("onClose", async () => {
      await consentWatch?.stop();
      await manager?.close();
    });

    // Malformed JSON, a wrong content type, an oversized body or input the host's input rule
    // refuses answer in the chat API's own `{error}` shape rather than the host's.
    app.setErrorHandler((error: Error & { statusCode?: number }, _request, reply) => {
      const clientStatus = error instanceof AtriumError ? error.httpStatus : error.statusCode;
      const status = clientStatus && clientStatus >= 400 && clientStatus < 500 ? clientStatus : 500;
      if (status === 500) onError(error, "request");
      const message = error instanceof AtriumError ? error.plainMessage : error.message;
      return sendError(reply, status, { error: status === 500 ? "internal error" : message });
    });

    app.post(`${prefix}/chat`, { schema: docs("chat") }, async (request, reply) => {
      const received = performance.now();
      let chat: ReturnType<typeof parseChatRequest>;
      try {
        chat = parseChatRequest(request.body);
      } catch (error) {
        return sendError(reply, 400, { error: (error as Error).message });
      }
      const stepId = await bus.newStepId(chat.workflowId);
      const abort = new AbortController();
      const onClose = () => {
        if (!reply.raw.writableFinished) abort.abort();
      };
      reply.raw.once("close", onClose);
      try {
        const { done } = await runs().start({
          workflowId: chat.workflowId,
          stepId,
          request: requestOf(chat),
          onBusy: chat.onBusy,
          signal: abort.signal,
        });
        return reply.send(chatResponseOf(await done, performance.now() - received));
      } catch (error) {
        if (error instanceof RunConflictError) return sendError(reply, 409, conflictBody(error));
        if (!(error instanceof RunKernelError)) throw error;
        return sendError(reply, 500, { error: error.message, workflow_id: chat.workflowId });
      } finally {
        reply.raw.off("close", onClose);
      }
    });

    app.post(`${prefix}/chat/runs`, { schema: docs("startRun") }, async (request, reply) => {
      let chat: ReturnType<typeof parseChatRequest>;
      try {
        chat = parseChatRequest(request.body);
      } catch (error) {
        return sendError(reply, 400, { error: (error as Error).message });
      }
      const stepId = await bus.newStepId(chat.workflowId);
      try {
        const { run, done } = await runs().start({
          workflowId: chat.workflowId,
          stepId,
          request: requestOf(chat),
          onBusy: chat.onBusy,
        });
        done.catch(() => undefined);
        return reply
          .code(202)
          .header("location", `${request.url.replace(/\?.*$/, "")}/${chat.workflowId}/${stepId}`)
          .send({ workflow_id: chat.workflowId, step_id: stepId, status: run.status });
      } catch (error) {
        if (error instanceof RunConflictError) return sendError(reply, 409, conflictBody(error));
        throw error;
      }
    });

    app.get<{ Querystring: Record<string, string | undefined> }>(
      `${prefix}/chat/runs`,
      { schema: docs("yieldedRuns") },
      async (request, reply) => {
        let query: ReturnType<typeof parseYieldedQuery>;
        try {
          query = parseYieldedQuery(request.query);
        } catch (error) {
          return sendError(reply, 400, { error: (error as Error).message });
        }
        const page = await runs().yielded(query);
        const last = page.at(-1);
        return reply.header("cache-control", "no-store").send({
          runs: page.map(yieldedView),
          ...(last && page.length === query.limit ? { next_cursor: cursorOf(last) } : {}),
        });
      },
    );

    type RunParams = { Params: { workflow_id: string; step_id: string } };
    const runIds = (request: { params: { workflow_id: string; step_id: string } }) => {
      const { workflow_id: workflowId, step_id: stepId } = request.params;
      return isValidTraceId(workflowId) && isValidTraceId(stepId)
        ? { workflowId, stepId }
        : undefined;
    };
    const badIds = { error: "workflow_id and step_id must match [A-Za-z0-9_-]" };

    app.get<RunParams>(
      `${prefix}/chat/runs/:workflow_id/:step_id`,
      { schema: docs("run") },
      async (request, reply) => {
        const ids = runIds(request);
        if (!ids) return sendError(reply, 400, badIds);
        const run = await runs().get(ids.workflowId, ids.stepId);
        if (!run) {
          return sendError(reply, 404, { error: `no run for ${ids.workflowId}/${ids.stepId}` });
        }
        return reply.header("cache-control", "no-store").send(runView(run));
      },
    );

    app.post<RunParams>(
      `${prefix}/chat/runs/:workflow_id/:step_id/resume`,
      { schema: docs("resumeRun") },
      async (request, reply) => {
        const received = performance.now();
        const ids = runIds(request);
        if (!ids) return sendError(reply, 400, badIds);
        let resume: ReturnType<typeof parseResumeRequest>;
        try {
          resume = parseResumeRequest(request.body);
        } catch (error) {
          return sendError(reply, 400, { error: (error as Error).message });
        }
        const abort = new AbortController();
        const onClose = () => {
          if (!reply.raw.writableFinished) abort.abort();
        };
        if (!resume.background) reply.raw.once("close", onClose);
        try {
          const { run, done } = await runs().resume(
            ids.workflowId,
            ids.stepId,
            { ...resume, decidedBy: callerOf(request) },
            resume.background ? undefined : abort.signal,
          );
          if (resume.background) {
            done.catch(() => undefined);
            return reply.code(202).send({
              workflow_id: run.workflow_id,
              step_id: run.step_id,
              status: run.status,
            });
          }
          return reply.send(chatResponseOf(await done, performance.now() - received));
        } catch (error) {
          if (error instanceof RunNotFoundError) {
            return sendError(reply, 404, { error: error.message });
          }
          if (error instanceof RunConflictError) return sendError(reply, 409, conflictBody(error));
          if (!(error instanceof RunKernelError)) throw error;
          return sendError(reply, 500, { error: error.message, workflow_id: ids.workflowId });
        } finally {
          reply.raw.off("close", onClose);
        }
      },
    );

    app.post<RunParams>(
      `${prefix}/chat/runs/:workflow_id/:step_id/cancel`,
      { schema: docs("cancelRun") },
      async (request, reply) => {
        const ids = runIds(request);
        if (!ids) return sendError(reply, 400, badIds);
        try {
          return reply.send(runView(await runs().cancel(ids.workflowId, ids.stepId)));
        } catch (error) {
          if (error instanceof RunNotFoundError) {
            return sendError(reply, 404, { error: error.message });
          }
          if (error instanceof RunConflictError) return sendError(reply, 409, conflictBody(error));
          throw error;
        }
      },
    );

    app.get<{ Params: { workflow_id: string }; Querystring: { last_event_id?: string } }>(
      `${prefix}/chat/stream/:workflow_id`,
      { schema: docs("stream") },
      async (request, reply) => {
        const workflowId = request.params.workflow_id;
        if (!isValidTraceId(workflowId)) {
          return sendError(reply, 400, { error: "workflow_id must match [A-Za-z0-9_-]" });
        }
        reply.hijack();
        await serveTraceStream(
          request.raw,
          reply.raw,
          {
            bus,
            workflowId,
            lastEventId: parseLastEventId(
              request.headers["last-event-id"],
              request.query.last_event_id,
            ),
            inactivityTimeoutMs: streamTimeoutMs,
            heartbeatMs: Math.min(heartbeatMs, streamTimeoutMs),
            onError: (error) => onError(error, "stream"),
          },
          (handle) => {
            streams.add(handle);
            return () => streams.delete(handle);
          },
        );
      },
    );

    app.get<{ Querystring: { limit?: string } }>(
      `${prefix}/chat/workflows`,
      { schema: docs("workflows") },
      async (request, reply) => {
        const raw = request.query.limit ?? "50";
        const limit = Number(raw);
        if (!/^\d+$/.test(raw) || limit < 1 || limit > 500) {
          return sendError(reply, 400, { error: "limit must be an integer from 1 to 500" });
        }
        try {
          return reply.send({ workflows: await bus.workflows(limit) });
        } catch (error) {
          onError(error, "workflows");
          return sendError(reply, 500, { error: "traces cannot be listed" });
        }
      },
    );

    app.get<{ Params: { workflow_id: string; step_id: string } }>(
      `${prefix}/chat/history/:workflow_id/:step_id`,
      { schema: docs("history") },
      async (request, reply) => {
        const { workflow_id: workflowId, step_id: stepId } = request.params;
        if (!isValidTraceId(workflowId) || !isValidTraceId(stepId)) {
          return sendError(reply, 400, {
            error: "workflow_id and step_id must match [A-Za-z0-9_-]",
          });
        }
        try {
          return reply.send({ events: await bus.history(workflowId, stepId) });
        } catch (error) {
          if (error instanceof TraceHistoryError && error.failure === "not_found") {
            return sendError(reply, 404, { error: error.message });
          }
          if (error instanceof TraceHistoryError && error.failure === "invalid_id") {
            return sendError(reply, 400, { error: error.message });
          }
          onError(error, "history");
          return sendError(reply, 500, { error: "trace cannot be read" });
        }
      },
    );
  };
}
