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

// A live message reaches every stream of its workflow in turn, with the same JSON: its SSE frame
// is built once and shared, rather than concatenated (and flattened for the socket) per stream.
let lastFrameJson: string | undefined;
let lastFrame = "";

function frameOf(event: TraceEvent, json: string | undefined): string {
  if (json !== undefined && json === lastFrameJson) return lastFrame;
  const id = event.seq === undefined ? "" : `id: ${event.seq}\n`;
  const frame = `${id}data: ${json ?? JSON.stringify(event)}\n\n`;
  if (json !== undefined) {
    lastFrameJson = json;
    lastFrame = frame;
  }
  return frame;
}

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
  // Once the backlog is out, a live event is written from the feed's handler itself while the
  // client keeps up: no queue, promise or timer per event, which at thousands of events a second
  // is most of a stream's cost. A blocked client (or the backlog still going out) queues instead.
  let streaming = false;
  let blocked = false;
  let completed = false;
  let wake: (() => void) | undefined;
  const live: Live[] = [];
  let lastActivity = Date.now();
  let lastWrite = lastActivity;

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

  const onDrain = () => {
    blocked = false;
    wake?.();
  };
  const write = (chunk: string) => {
    lastWrite = Date.now();
    // A slow client: nothing more is written until its buffer drains, rather than queueing in
    // the socket without bound.
    if (!res.write(chunk)) {
      blocked = true;
      res.once("drain", onDrain);
    }
  };
  const send = ({ event, json }: Live) => {
    lastActivity = Date.now();
    write(frameOf(event, json));
  };
  /** Writes the event unless the client has it already; returns whether it was written. */
  const forward = (item: Live): boolean => {
    const { seq } = item.event;
    if (seq === undefined || seq <= lastSent) return false;
    lastSent = seq;
    send(item);
    return true;
  };
  /** Sleeps until woken (an event queued, the client drained, the stream closed) or `ms` passed. */
  const sleep = (ms: number) =>
    new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(true), ms);
      wake = () => {
        clearTimeout(timer);
        resolve(false);
      };
    }).finally(() => {
      wake = undefined;
    });

  async function run() {
    if (!bus.cache) {
      send({ event: localEvent(workflowId, "error", { message: "no cache store configured" }) });
      return;
    }
    let unsubscribe: Unsubscribe | undefined;
    try {
      unsubscribe = await bus.subscribe(
        workflowId,
        (event, json) => {
          if (closed || completed) return;
          if (streaming && !blocked && live.length === 0) {
            if (forward({ event, json }) && event.type === "step_complete") {
              completed = true;
              wake?.();
            }
            return;
          }
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
      let last: string | undefined;
      for (const item of backlog) {
        while (blocked && !closed) await sleep(options.heartbeatMs);
        if (closed) return;
        if (forward(item)) last = item.event.type;
      }
      if (last === "step_complete") return;
      while (!closed && !completed) {
        if (blocked) {
          await sleep(options.heartbeatMs);
          continue;
        }
        if (live.length > 0) {
          const item = live.shift() as Live;
          if (forward(item) && item.event.type === "step_complete") return;
          continue;
        }
        streaming = true;
        const now = Date.now();
        const remaining = options.inactivityTimeoutMs - (now - lastActivity);
        if (remaining <= 0) {
          send({
            event: localEvent(workflowId, "timeout", {
              inactivity_ms: options.inactivityTimeoutMs,
            }),
          });
          return;
        }
        const untilHeartbeat = options.heartbeatMs - (now - lastWrite);
        if (untilHeartbeat <= 0) write(": heartbeat\n\n");
        else await sleep(Math.min(untilHeartbeat, remaining));
      }
    } catch (error) {
      options.onError?.(error);
      send({ event: localEvent(workflowId, "error", { message: "trace stream failed" }) });
    } finally {
      res.off("drain", onDrain);
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
