import type { IncomingMessage, ServerResponse } from "node:http";
import type { Unsubscribe } from "@atrium/kit";
import type { TraceBus } from "../trace/trace-bus.js";
import type { TraceEvent } from "../trace/trace-event.js";

/** A live event with the JSON it was published as. */
interface Live {
  event: TraceEvent;
  json?: string;
}

export interface TraceStreamOptions {
  bus: TraceBus;
  workflowId: string;
  /** Sequence number the client already has (`Last-Event-ID`); only later events are sent. */
  lastEventId: number;
  /** Closes the stream with a `timeout` event after this long without an event. */
  inactivityTimeoutMs: number;
  /** Longest sleep of the stream loop; an idle wake-up writes a `: heartbeat` comment. */
  heartbeatMs: number;
  onError?: (error: unknown) => void;
}

/** Lets the host end a stream early when the server shuts down. */
export interface TraceStreamHandle {
  /** Ends the stream with a final `error` event telling the client to reconnect elsewhere. */
  shutdown(): void;
}

/** The message of the last event a stream sends when its server shuts down. */
export const shutdownMessage = "server shutting down; reconnect with Last-Event-ID";

/** The message of the last event a stream sends when its live feed broke. */
export const interruptedMessage =
  "the trace store connection was lost; events may have been missed: reconnect with Last-Event-ID";

/** Live events waiting for one slow client before its stream is closed. */
export const maxQueuedEvents = 10_000;

export const sseHeaders = {
  "Content-Type": "text/event-stream; charset=utf-8",
  "Cache-Control": "no-cache",
  "X-Accel-Buffering": "no",
  Connection: "keep-alive",
} as const;

function localEvent(workflowId: string, type: "timeout" | "error", data: Record<string, unknown>) {
  const event: TraceEvent = {
    workflow_id: workflowId,
    step_id: "",
    type,
    timestamp: new Date().toISOString(),
    data,
  };
  return event;
}

/**
 * Serves one trace stream: connected → replaying → live → closed. It subscribes first (and waits
 * for the acknowledgement), then replays the log, then forwards live events; every event with a
 * sequence number at or below the last one sent is dropped, so nothing is lost or repeated.
 */
export function serveTraceStream(
  req: IncomingMessage,
  res: ServerResponse,
  options: TraceStreamOptions,
  register: (handle: TraceStreamHandle) => () => void,
): Promise<void> {
  const { bus, workflowId } = options;
  let lastSent = options.lastEventId;
  let closed = false;
  let wake: (() => void) | undefined;
  const live: Live[] = [];
  let lastActivity = Date.now();

  let shuttingDown = false;
  let interrupted = false;
  const close = () => {
    if (closed) return;
    closed = true;
    wake?.();
  };
  const unregister = register({
    shutdown() {
      shuttingDown = !closed;
      close();
    },
  });
  req.on("close", close);
  res.on("close", close);
  res.on("error", close);

  res.writeHead(200, sseHeaders);
  res.flushHeaders();

  const write = async (chunk: string) => {
    if (closed) return;
    if (res.write(chunk)) return;
    // A slow client: wait for its buffer to drain rather than queueing without bound.
    await new Promise<void>((resolve) => {
      const done = () => {
        res.off("drain", done);
        wake = undefined;
        resolve();
      };
      res.once("drain", done);
      wake = done;
    });
  };
  const send = async ({ event, json }: Live) => {
    lastActivity = Date.now();
    const id = event.seq === undefined ? "" : `id: ${event.seq}\n`;
    await write(`${id}data: ${json ?? JSON.stringify(event)}\n\n`);
  };
  /** Forwards events newer than the last sent; returns the type of the last one forwarded. */
  const forward = async (events: Live[]) => {
    let last: string | undefined;
    for (const item of events) {
      if (closed) break;
      const { seq } = item.event;
      if (seq === undefined || seq <= lastSent) continue;
      lastSent = seq;
      last = item.event.type;
      await send(item);
    }
    return last;
  };

  async function run() {
    if (!bus.cache) {
      await send({
        event: localEvent(workflowId, "error", { message: "no cache store configured" }),
      });
      return;
    }
    let unsubscribe: Unsubscribe | undefined;
    try {
      unsubscribe = await bus.subscribe(
        workflowId,
        (event, json) => {
          // A client that stopped reading is cut off rather than buffered without bound; it can
          // reconnect with Last-Event-ID and catch up from the log.
          if (live.length >= maxQueuedEvents) close();
          else live.push({ event, json });
          wake?.();
        },
        {
          // Whatever was published while the feed was down is only in the log: the client is
          // told to reconnect, which replays it, instead of waiting on a stream gone quiet.
          onInterrupted: (error) => {
            options.onError?.(error);
            interrupted = !closed;
            close();
          },
        },
      );
      if (closed) return;
      const replayed = await bus.replay(workflowId);
      const backlog = [...replayed.map((event) => ({ event })), ...live.splice(0)];
      // A backlog that ends with step_complete means the workflow is idle and the client has it
      // all; one mid-backlog only ended an earlier step.
      if ((await forward(backlog)) === "step_complete") return;
      while (!closed) {
        if (live.length > 0) {
          const batch = live.splice(0);
          for (const item of batch) {
            if ((await forward([item])) === "step_complete") return;
          }
          continue;
        }
        const remaining = options.inactivityTimeoutMs - (Date.now() - lastActivity);
        if (remaining <= 0) {
          await send({
            event: localEvent(workflowId, "timeout", {
              inactivity_ms: options.inactivityTimeoutMs,
            }),
          });
          return;
        }
        let timedOut = false;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(
            () => {
              timedOut = true;
              resolve();
            },
            Math.min(options.heartbeatMs, remaining),
          );
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wake = undefined;
        if (timedOut && live.length === 0 && !closed) await write(": heartbeat\n\n");
      }
    } catch (error) {
      options.onError?.(error);
      await send({ event: localEvent(workflowId, "error", { message: "trace stream failed" }) });
    } finally {
      await unsubscribe?.().catch((error) => options.onError?.(error));
    }
  }

  return run().finally(() => {
    closed = true;
    req.off("close", close);
    unregister();
    if (res.writableEnded) return;
    if (shuttingDown || interrupted) {
      const message = shuttingDown ? shutdownMessage : interruptedMessage;
      const event = localEvent(workflowId, "error", { message });
      res.write(`data: ${JSON.stringify(event)}\n\n`);
    }
    res.end();
  });
}
