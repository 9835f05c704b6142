import { createParser, type EventSourceMessage } from "eventsource-parser";
import type { TraceEvent } from "./chat-types.js";
import type { HttpClient } from "./http-client.js";

export interface TraceStreamOptions {
  /** Resume after this event id (the `seq` of the last event seen). */
  lastEventId?: string;
  signal?: AbortSignal;
  /** Reconnects in a row without receiving an event before giving up. Default 5. */
  maxReconnects?: number;
  /** Wait before reconnecting; a `retry:` field from the server replaces it. Default 1 s. */
  reconnectDelayMs?: number;
}

/** After these the server closes the stream; reconnecting would only wait for nothing. */
const terminalTypes = new Set(["step_complete", "timeout", "error"]);

/**
 * Follows a workflow's trace stream until a terminal event. A dropped connection (network error,
 * 5xx, or the body ending early) is reopened with `Last-Event-ID`, so the server replays exactly
 * what was missed and nothing twice.
 */
export async function* followTrace(
  http: HttpClient,
  path: string,
  options: TraceStreamOptions = {},
): AsyncGenerator<TraceEvent, void, undefined> {
  const { signal } = options;
  const maxReconnects = options.maxReconnects ?? 5;
  let delayMs = options.reconnectDelayMs ?? 1000;
  let lastEventId = options.lastEventId;
  let failures = 0;

  const retryOrThrow = async (error: unknown) => {
    failures += 1;
    if (failures > maxReconnects) throw error;
    await sleep(delayMs, signal);
  };

  while (!signal?.aborted) {
    let response: Response;
    try {
      response = await http.send("GET", path, {
        headers: {
          accept: "text/event-stream",
          ...(lastEventId === undefined ? {} : { "last-event-id": lastEventId }),
        },
        signal,
      });
    } catch (error) {
      if (signal?.aborted) return;
      await retryOrThrow(error);
      continue;
    }
    if (!response.ok || response.body === null) {
      const failure = await http.failure(response);
      if (response.status < 500) throw failure;
      await retryOrThrow(failure);
      continue;
    }

    const messages: EventSourceMessage[] = [];
    const parser = createParser({
      onEvent: (message) => messages.push(message),
      onRetry: (ms) => {
        delayMs = ms;
      },
    });
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        parser.feed(value);
        for (let message = messages.shift(); message; message = messages.shift()) {
          if (message.id !== undefined) lastEventId = message.id;
          failures = 0;
          const event = JSON.parse(message.data) as TraceEvent;
          yield event;
          if (terminalTypes.has(event.type)) return;
        }
      }
      if (signal?.aborted) return;
      await retryOrThrow(new Error(`trace stream ${path} ended before a terminal event`));
    } catch (error) {
      if (signal?.aborted) return;
      await retryOrThrow(error);
    } finally {
      reader.cancel().catch(() => {});
    }
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
  });
}
