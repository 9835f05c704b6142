import type { FastifySchema } from "fastify";
import { maxMessageLength } from "./chat-request.js";
import { answerFallbackLength, maxSources } from "./chat-response.js";

/*
 * JSON Schemas of the chat API (spec: chat-api), for @fastify/swagger to collect into the
 * OpenAPI document. The router does not validate or serialize with them (see chat-router.ts):
 * parseChatRequest's messages name the field, and the kernel's token and data objects have open
 * key sets that a response serializer would strip.
 */

const traceId = { type: "string", pattern: "^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$" };

const chatRequest = {
  type: "object",
  required: ["message"],
  properties: {
    message: {
      type: "string",
      minLength: 1,
      maxLength: maxMessageLength,
      description: "The task or question.",
    },
    workflow_id: {
      ...traceId,
      nullable: true,
      description: "Supply it to open the stream before the answer; default `chat_<12 hex>`.",
    },
    agent_id: {
      type: "string",
      nullable: true,
      description: "Agent identity passed to the kernel; default `chat`.",
    },
    system_prompt: {
      type: "string",
      nullable: true,
      description: "Prepended to the kernel call; default empty.",
    },
    context: {
      type: "object",
      nullable: true,
      additionalProperties: true,
      description: "Forwarded to the kernel with workflow_id and step_id merged in.",
    },
    on_busy: {
      type: "string",
      enum: ["reject", "enqueue", "interrupt"],
      default: "reject",
      description:
        "While another step of the workflow runs: `reject` answers 409, `enqueue` waits for " +
        "it (and any queued before) to end, `interrupt` cancels it and then runs.",
    },
  },
};

const chatResponse = {
  type: "object",
  required: ["workflow_id", "step_id", "status", "answer", "sources", "tokens", "elapsed_ms"],
  properties: {
    workflow_id: { type: "string", description: "Open the stream with it." },
    step_id: { type: "string", description: "Of the form `step_<unix seconds>`." },
    status: { type: "string", enum: ["success", "failure", "yield"] },
    answer: {
      type: "string",
      description: `The output summary; without one, the payload as text cut to ${answerFallbackLength} characters.`,
    },
    sources: {
      type: "array",
      maxItems: maxSources,
      items: {
        type: "object",
        required: ["title", "url", "source"],
        properties: {
          title: { type: "string" },
          url: { type: "string" },
          source: { type: "string", description: "`memory`, `web` or `browser`." },
        },
      },
    },
    tokens: {
      type: "object",
      additionalProperties: { type: "number" },
      description: "Token usage; the keys depend on the provider.",
    },
    elapsed_ms: { type: "number", description: "Wall-clock milliseconds from receipt to answer." },
    pending: {
      type: "array",
      description: "What a `yield` waits for; present only then.",
      items: {
        type: "object",
        required: ["kind", "detail"],
        properties: {
          kind: { type: "string", enum: ["credentials", "approval", "consent"] },
          detail: { type: "string" },
          provider: {
            type: "string",
            description: "`consent`: the broker provider the step needs a connection to.",
          },
          authorization_url: {
            type: "string",
            description:
              "`consent`: where the person grants it (the gateway's connect flow); the step resumes by itself once the connection is active.",
          },
        },
      },
    },
  },
};

const pendingItems = chatResponse.properties.pending;

const runStatus = {
  type: "string",
  enum: ["queued", "running", "yielded", "completed", "failed", "cancelled"],
};

const runIds = {
  type: "object",
  required: ["workflow_id", "step_id"],
  properties: { workflow_id: traceId, step_id: traceId },
};

const runAccepted = {
  type: "object",
  required: ["workflow_id", "step_id", "status"],
  properties: {
    workflow_id: { type: "string" },
    step_id: { type: "string" },
    status: { ...runStatus, description: "`running`, or `queued` behind a busy workflow." },
  },
};

const run = {
  type: "object",
  required: [
    "workflow_id",
    "step_id",
    "status",
    "pause",
    "host",
    "cancel_requested",
    "created_at",
    "updated_at",
  ],
  properties: {
    workflow_id: { type: "string" },
    step_id: { type: "string" },
    status: runStatus,
    pause: {
      type: "integer",
      description:
        "How many times the step paused; a resume may name it to guard against staleness.",
    },
    pending: { ...pendingItems, description: "What a `yielded` step waits for." },
    reason: { type: "string", description: "Why the step failed or was cancelled." },
    response: {
      type: "object",
      description: "The step's last answer (at its end or its last pause), as POST /chat's.",
      properties: {
        status: { type: "string", enum: ["success", "failure", "yield"] },
        answer: { type: "string" },
        sources: chatResponse.properties.sources,
        tokens: chatResponse.properties.tokens,
        pending: pendingItems,
      },
    },
    host: {
      type: "string",
      nullable: true,
      description: "The agent host running (or that last ran) the step.",
    },
    decisions: {
      type: "array",
      description:
        "Every approve or deny that resumed the step, oldest first: who (the caller as the host " +
        "authenticated it), which, when, for which pause. Absent before the first.",
      items: {
        type: "object",
        required: ["pause", "decision", "decided_by", "decided_at"],
        properties: {
          pause: { type: "integer" },
          decision: { type: "string", enum: ["approve", "deny"] },
          decided_by: {
            type: "string",
            description:
              "`user <tenant>/<user>` from a JWT, else `api key`, `client certificate` or `unauthenticated`.",
          },
          decided_at: { type: "string", format: "date-time" },
        },
      },
    },
    cancel_requested: { type: "boolean" },
    lease_expires_at: {
      type: "string",
      format: "date-time",
      description: "While running: when the host's claim lapses without a heartbeat.",
    },
    created_at: { type: "string", format: "date-time" },
    updated_at: { type: "string", format: "date-time" },
  },
};

const traceEvent = {
  type: "object",
  required: ["workflow_id", "step_id", "type", "timestamp", "data"],
  properties: {
    workflow_id: { type: "string" },
    step_id: { type: "string" },
    type: {
      type: "string",
      enum: [
        "thinking",
        "tool_start",
        "tool_result",
        "llm_request",
        "llm_response",
        "step_complete",
        "timeout",
        "error",
      ],
    },
    timestamp: { type: "string", format: "date-time" },
    data: { type: "object", additionalProperties: true },
    seq: {
      type: "integer",
      description: "Per-workflow sequence number, the SSE `id`; absent on stream-made events.",
    },
  },
};

/** The chat API's own error body: `{error}`, and the workflow on a failed POST /chat. */
const chatError = (description: string, withWorkflow = false) => ({
  description,
  type: "object",
  required: ["error"],
  properties: {
    error: { type: "string" },
    ...(withWorkflow ? { workflow_id: { type: "string" } } : {}),
  },
});

/** A refused transition names the step it concerns and that step's status. */
const runConflict = (description: string) => ({
  description,
  type: "object",
  required: ["error"],
  properties: {
    error: { type: "string" },
    workflow_id: { type: "string" },
    step_id: { type: "string" },
    status: runStatus,
  },
});

/** The host's refusals reach the caller through the router's error handler, as `{error}` too. */
const refusedByHost = {
  401: chatError("Credentials are missing or not valid (when the host's auth is on)."),
};

const badId = chatError("An id is not 1-128 characters of [A-Za-z0-9_-].");

export const chatRouteSchemas = {
  chat: {
    operationId: "runChat",
    summary: "Run a chat message",
    description:
      "Runs the message on the kernel and answers once it is done; follow its trace events " +
      "meanwhile on /chat/stream/{workflow_id}.",
    body: chatRequest,
    response: {
      200: { description: "The answer.", ...chatResponse },
      400: chatError("The body is not a ChatRequest; the message names the field."),
      ...refusedByHost,
      409: runConflict(
        "`on_busy: reject` and another step of the workflow is running (that step is named).",
      ),
      413: chatError("The body is larger than the host accepts."),
      500: chatError("The kernel failed; the stream has had an `error` event.", true),
    },
  },
  startRun: {
    operationId: "startChatRun",
    summary: "Start a chat message in the background",
    description:
      "Takes a ChatRequest and answers 202 at once with the step's ids; read its status on " +
      "/chat/runs/{workflow_id}/{step_id}, its events on the stream and history as for POST /chat.",
    body: chatRequest,
    response: {
      202: { description: "The step started (or was queued).", ...runAccepted },
      400: chatError("The body is not a ChatRequest; the message names the field."),
      ...refusedByHost,
      409: runConflict("`on_busy: reject` and another step of the workflow is running."),
    },
  },
  yieldedRuns: {
    operationId: "listYieldedChatRuns",
    summary: "List the steps waiting for something (an approval, a credential)",
    description:
      "The yielded steps of every host sharing the store, newest pause first: what each waits " +
      "for, the draft it would act on, who asked and when. Resume one with " +
      "/chat/runs/{workflow_id}/{step_id}/resume.",
    querystring: {
      type: "object",
      required: ["status"],
      properties: {
        status: { type: "string", enum: ["yielded"] },
        pending: {
          type: "string",
          enum: ["approval", "credentials", "consent"],
          description: "Only the steps waiting for an item of this kind.",
        },
        limit: { type: "integer", minimum: 1, maximum: 200, default: 50 },
        cursor: { type: "string", description: "The `next_cursor` of the previous page." },
      },
    },
    response: {
      200: {
        description: "A page of waiting steps.",
        type: "object",
        required: ["runs"],
        properties: {
          runs: {
            type: "array",
            items: {
              type: "object",
              required: [
                "workflow_id",
                "step_id",
                "pause",
                "pending",
                "draft",
                "message",
                "asked_by",
                "asked_at",
                "created_at",
              ],
              properties: {
                workflow_id: { type: "string" },
                step_id: { type: "string" },
                pause: { type: "integer", description: "Name it in the resume." },
                pending: pendingItems,
                draft: {
                  type: "string",
                  description: "The step's answer at the pause: what approving lets it act on.",
                },
                message: { type: "string", description: "The request the step works on." },
                asked_by: {
                  type: "object",
                  required: ["user_id", "agent_id", "workflow_id"],
                  properties: {
                    user_id: {
                      type: "string",
                      description: "The request's `context.user_id`, or `anonymous`.",
                    },
                    session_id: {
                      type: "string",
                      description: "The request's `context.session_id`.",
                    },
                    agent_id: { type: "string" },
                    workflow_id: { type: "string" },
                  },
                },
                asked_at: { type: "string", format: "date-time", description: "When it paused." },
                created_at: { type: "string", format: "date-time" },
              },
            },
          },
          next_cursor: {
            type: "string",
            description: "Present when the page is full: pass it as `cursor` for the next.",
          },
        },
      },
      400: chatError("A query field is not valid; the message names it."),
      ...refusedByHost,
    },
  },
  run: {
    operationId: "readChatRun",
    summary: "Read a step's run status",
    params: runIds,
    response: {
      200: { description: "The run.", ...run },
      400: badId,
      ...refusedByHost,
      404: chatError("No run of that step."),
    },
  },
  resumeRun: {
    operationId: "resumeChatRun",
    summary: "Resume a yielded step with what it waits for",
    description:
      "Continues the step where it paused, on this host, in the same workflow and trace; the " +
      "tools that ran before the pause do not run again. Exactly one resume of a pause succeeds.",
    params: runIds,
    body: {
      type: "object",
      properties: {
        pause: {
          type: "integer",
          minimum: 0,
          description: "The pause answered (the run's `pause`); default the current one.",
        },
        approval: {
          type: "string",
          enum: ["approve", "deny"],
          description: "For an `approval` item: `deny` ends the step as failed.",
        },
        connection_id: {
          type: "string",
          description: "For a `credentials` item: the broker connection to use.",
        },
        context: {
          type: "object",
          additionalProperties: true,
          description: "Merged into the step's context.",
        },
        background: {
          type: "boolean",
          default: false,
          description: "Answer 202 at once instead of the step's answer.",
        },
      },
    },
    response: {
      200: { description: "The step's answer after the resume.", ...chatResponse },
      202: { description: "Resumed in the background.", ...runAccepted },
      400: chatError("The body or an id is not valid; the message names the field."),
      ...refusedByHost,
      404: chatError("No run of that step."),
      409: runConflict(
        "The step is not yielded (resumed already, ended, never paused), the pause named is " +
          "stale, or another step of the workflow is running.",
      ),
      500: chatError("The kernel failed; the stream has had an `error` event.", true),
    },
  },
  cancelRun: {
    operationId: "cancelChatRun",
    summary: "Cancel a queued, running or yielded step",
    description:
      "Reaches the host running the step, which stops its work; the trace ends with " +
      '`step_complete` `{status: failure, summary: "cancelled: …"}`. Answers once it stopped.',
    params: runIds,
    response: {
      200: { description: "The run after the cancel.", ...run },
      400: badId,
      ...refusedByHost,
      404: chatError("No run of that step."),
      409: runConflict("The step has ended already."),
    },
  },
  stream: {
    operationId: "streamTraces",
    summary: "Stream the trace events of a workflow (SSE)",
    description:
      "Replays the buffered events, then follows live ones until `step_complete`, the client " +
      "leaving, or the inactivity timeout (a `timeout` event). Each message's `data` is one " +
      "TraceEvent; `: heartbeat` comments keep proxies open. `Last-Event-ID` (or " +
      "`last_event_id`) resumes after an event.",
    params: { type: "object", required: ["workflow_id"], properties: { workflow_id: traceId } },
    querystring: {
      type: "object",
      properties: {
        last_event_id: { type: "string", pattern: "^\\d{1,15}$", description: "Resume after it." },
      },
    },
    response: {
      200: {
        description: "Server-Sent Events; each `data:` line is a TraceEvent as JSON.",
        content: { "text/event-stream": { schema: traceEvent } },
      },
      400: badId,
      ...refusedByHost,
    },
  },
  workflows: {
    operationId: "listWorkflows",
    summary: "List recent workflows with their steps",
    querystring: {
      type: "object",
      properties: { limit: { type: "integer", minimum: 1, maximum: 500, default: 50 } },
    },
    response: {
      200: {
        description: "Most recently written first.",
        type: "object",
        required: ["workflows"],
        properties: {
          workflows: {
            type: "array",
            items: {
              type: "object",
              required: ["workflow_id", "updated_at", "steps"],
              properties: {
                workflow_id: { type: "string" },
                updated_at: { type: "string", format: "date-time" },
                steps: {
                  type: "array",
                  items: {
                    type: "object",
                    required: ["step_id", "updated_at"],
                    properties: {
                      step_id: { type: "string" },
                      updated_at: { type: "string", format: "date-time" },
                    },
                  },
                },
              },
            },
          },
        },
      },
      400: chatError("limit is not an integer from 1 to 500."),
      ...refusedByHost,
      500: chatError("The traces cannot be listed."),
    },
  },
  history: {
    operationId: "readTraceHistory",
    summary: "Read the trace events of one step",
    params: {
      type: "object",
      required: ["workflow_id", "step_id"],
      properties: { workflow_id: traceId, step_id: traceId },
    },
    response: {
      200: {
        description: "The step's events, as the stream sends them.",
        type: "object",
        required: ["events"],
        properties: { events: { type: "array", items: traceEvent } },
      },
      400: badId,
      ...refusedByHost,
      404: chatError("No trace of that step."),
      500: chatError("The trace cannot be read."),
    },
  },
} satisfies Record<
  string,
  FastifySchema & { operationId: string; summary: string; description?: string }
>;
