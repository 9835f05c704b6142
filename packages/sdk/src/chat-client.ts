import type {
  ChatRequest,
  ChatResponse,
  ChatResumeRequest,
  ChatRun,
  ChatRunAccepted,
  ChatWaitingPage,
  ChatWaitingQuery,
  TraceEvent,
} from "./chat-types.js";
import { createHttpClient, type FetchLike } from "./http-client.js";
import { followTrace, type TraceStreamOptions } from "./trace-stream.js";

export interface ChatClientOptions {
  /** Where the host mounted the chat router, e.g. http://127.0.0.1:8000/api/v1. */
  baseUrl: string;
  /** Whatever the host application authenticates with. */
  headers?: Record<string, string>;
  fetch?: FetchLike;
}

export interface ChatClient {
  /** Runs one message on the kernel and waits for the answer. */
  send(request: ChatRequest, options?: { signal?: AbortSignal }): Promise<ChatResponse>;
  /** Live trace events of a workflow, reconnecting with Last-Event-ID after a drop. */
  stream(
    workflowId: string,
    options?: TraceStreamOptions,
  ): AsyncGenerator<TraceEvent, void, undefined>;
  history(workflowId: string, stepId: string): Promise<TraceEvent[]>;
  /** Starts a message in the background: answers at once with the step's ids (HTTP 202). */
  start(request: ChatRequest): Promise<ChatRunAccepted>;
  /** The step's run: status, pause, pending, last answer. */
  run(workflowId: string, stepId: string): Promise<ChatRun>;
  /** Resumes a yielded step with what it waits for and waits for its answer. */
  resume(
    workflowId: string,
    stepId: string,
    resume: ChatResumeRequest,
    options?: { signal?: AbortSignal },
  ): Promise<ChatResponse>;
  /** Resumes a yielded step in the background (HTTP 202). */
  resumeInBackground(
    workflowId: string,
    stepId: string,
    resume: ChatResumeRequest,
  ): Promise<ChatRunAccepted>;
  /** Stops a queued, running or yielded step on whichever host runs it; the run afterwards. */
  cancel(workflowId: string, stepId: string): Promise<ChatRun>;
}

/**
 * The approvals list, beside the chat client's other calls (kept apart so that stand-ins of a
 * ChatClient written before it still are one).
 */
export interface ChatWaitingList {
  /**
   * The steps waiting for something, newest pause first (GET /chat/runs?status=yielded);
   * `{pending: "approval"}` lists the approvals to decide. A bad field is a 400 naming it.
   */
  waiting(query?: ChatWaitingQuery): Promise<ChatWaitingPage>;
}

const runPath = (workflowId: string, stepId: string) =>
  `chat/runs/${encodeURIComponent(workflowId)}/${encodeURIComponent(stepId)}`;

export function createChatClient(options: ChatClientOptions): ChatClient & ChatWaitingList {
  const http = createHttpClient(options);
  return {
    send: (request, call) => http.json("POST", "chat", { body: request, signal: call?.signal }),
    stream: (workflowId, streamOptions) =>
      followTrace(http, `chat/stream/${encodeURIComponent(workflowId)}`, streamOptions),
    async history(workflowId, stepId) {
      const result = await http.json<{ events?: TraceEvent[] }>(
        "GET",
        `chat/history/${encodeURIComponent(workflowId)}/${encodeURIComponent(stepId)}`,
      );
      return result.events ?? [];
    },
    start: (request) => http.json("POST", "chat/runs", { body: request }),
    run: (workflowId, stepId) => http.json("GET", runPath(workflowId, stepId)),
    resume: (workflowId, stepId, resume, call) =>
      http.json("POST", `${runPath(workflowId, stepId)}/resume`, {
        body: resume,
        signal: call?.signal,
      }),
    resumeInBackground: (workflowId, stepId, resume) =>
      http.json("POST", `${runPath(workflowId, stepId)}/resume`, {
        body: { ...resume, background: true },
      }),
    cancel: (workflowId, stepId) => http.json("POST", `${runPath(workflowId, stepId)}/cancel`),
    waiting: (query = {}) =>
      http.json("GET", "chat/runs", {
        query: {
          status: "yielded",
          pending: query.pending,
          limit: query.limit,
          cursor: query.cursor,
        },
      }),
  };
}
