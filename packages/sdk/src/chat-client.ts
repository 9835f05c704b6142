import type { ChatRequest, ChatResponse, TraceEvent } from "./chat-types.js";
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
}

export function createChatClient(options: ChatClientOptions): ChatClient {
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
  };
}
