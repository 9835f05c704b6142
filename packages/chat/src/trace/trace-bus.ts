import type { Cache, SubscribeOptions, Unsubscribe } from "@atrium/kit";
import {
  parseTraceEvent,
  type TraceEvent,
  type TraceEventInput,
  type TraceEventType,
} from "./trace-event.js";
import { createTraceFiles } from "./trace-files.js";
import type { TraceStore } from "./trace-store.js";
import type { WorkflowTraces } from "./workflow-index.js";

export interface TraceBusOptions {
  /** The cache + pub/sub store; without one the bus only keeps history and cannot stream. */
  cache?: Cache;
  /** Directory of the JSON Lines trace files, the store when no other `store` is given. */
  tracesDir?: string;
  /** Where history is kept instead of the trace files (PostgreSQL, shared by every host). */
  store?: TraceStore;
  /** Events kept in each workflow's log for replay; older ones are trimmed. Default 10,000. */
  logCapacity?: number;
  /** Seconds a workflow's log and sequence counter live after its last event. Default 7 days. */
  retentionSeconds?: number;
  /** Told about trace writes that failed; tracing never fails the chat that produces it. */
  onError?: (error: unknown, event: TraceEventInput) => void;
}

/**
 * Gets the parsed event (shared by all handlers of the message: read it, do not change it) and
 * its JSON as published, which streams forward without re-encoding.
 */
export type TraceEventHandler = (event: TraceEvent, json: string) => void;

/** Emits the events of one step; bound to its workflow and step. Never rejects. */
export interface TraceEmitter {
  readonly workflowId: string;
  readonly stepId: string;
  emit(type: TraceEventType, data: Record<string, unknown>): Promise<void>;
}

export interface TraceBus {
  /** The store backing replay and live streams, or undefined when none is configured. */
  readonly cache: Cache | undefined;
  /** Where the steps' events are kept for history and the workflow list. */
  readonly store: TraceStore;
  /**
   * Assigns the next sequence number of the workflow, appends the event to the workflow's capped
   * log, publishes it on `trace_events:{workflow_id}` and appends it to the step's history.
   * Events of one workflow published from this process are stored strictly in sequence order.
   */
  publish(event: TraceEventInput): Promise<TraceEvent>;
  /** The buffered log of a workflow, oldest first. */
  replay(workflowId: string): Promise<TraceEvent[]>;
  /** Resolves once the store acknowledged the subscription. */
  subscribe(
    workflowId: string,
    handler: TraceEventHandler,
    options?: SubscribeOptions,
  ): Promise<Unsubscribe>;
  /** The events of one step read from the trace store. */
  history(workflowId: string, stepId: string): Promise<TraceEvent[]>;
  /** Recent workflows of the trace store, with their steps. */
  workflows(limit: number): Promise<WorkflowTraces[]>;
  forStep(workflowId: string, stepId: string): TraceEmitter;
  /**
   * A new step id of the spec's form `step_<unix seconds>`, unique within the workflow: a second
   * already taken by another step (on any instance sharing the cache) moves on to the next one.
   */
  newStepId(workflowId: string): Promise<string>;
  /** Closes the trace store; the cache belongs to the caller and stays open. */
  close(): Promise<void>;
}

export const traceChannel = (workflowId: string) => `trace_events:${workflowId}`;
const logKey = (workflowId: string) => `trace_log:${workflowId}`;
const seqKey = (workflowId: string) => `trace_seq:${workflowId}`;

export const defaultLogCapacity = 10_000;
export const defaultRetentionSeconds = 7 * 24 * 3600;

export function createTraceBus(options: TraceBusOptions): TraceBus {
  const { cache } = options;
  const capacity = options.logCapacity ?? defaultLogCapacity;
  const retention = options.retentionSeconds ?? defaultRetentionSeconds;
  if (!options.store && !options.tracesDir) throw new Error("a trace store or tracesDir is needed");
  const store = options.store ?? createTraceFiles(options.tracesDir as string);
  // Per-workflow write queue: the sequence number is taken inside it, so the file sees one
  // workflow's events in sequence order as the log and the channel do.
  const queues = new Map<string, Promise<unknown>>();
  const localSteps = new Map<string, number>();
  let lastMessage: string | undefined;
  let lastEvent: TraceEvent | undefined;

  /**
   * Runs inside the workflow's queue: numbers, logs and publishes the event in one store call,
   * then queues the file line in that order. The file line is awaited by the caller but not by
   * the queue: the next event of the workflow need not wait for it.
   */
  async function write(
    input: TraceEventInput,
  ): Promise<{ event: TraceEvent; written: Promise<void> }> {
    const event: TraceEvent = {
      workflow_id: input.workflow_id,
      step_id: input.step_id,
      type: input.type,
      timestamp: input.timestamp ?? new Date().toISOString(),
      data: input.data,
    };
    if (!cache) return { event, written: store.append(event) };
    // The event's JSON with `seq` as its last field, spliced in by the store: numbering, the
    // capped log, the TTLs and the publish are one round trip, published only after the event is
    // in the log, so a stream that subscribed before gets it live and one that replays after
    // finds it in the log; dedupe by seq does the rest.
    const unnumbered = JSON.stringify(event);
    const head = `${unnumbered.slice(0, -1)},"seq":`;
    event.seq = await cache.appendSequenced({
      counterKey: seqKey(event.workflow_id),
      listKey: logKey(event.workflow_id),
      keep: capacity,
      channel: traceChannel(event.workflow_id),
      head,
      tail: "}",
      ttlSeconds: retention,
    });
    // The trace store gets the line the cache published (seq is the event's last field either way):
    // one JSON encoding per event instead of two.
    const written = store.append(event, `${head}${event.seq}}`);
    // Rejections are reported through the caller; this only keeps an early throw from leaving it unobserved.
    written.catch(() => undefined);
    return { event, written };
  }

  const bus: TraceBus = {
    cache,
    store,
    publish(input) {
      const previous = queues.get(input.workflow_id) ?? Promise.resolve();
      const result = previous.then(() => write(input));
      const tail = result.catch(() => undefined);
      queues.set(input.workflow_id, tail);
      void tail.then(() => {
        if (queues.get(input.workflow_id) === tail) queues.delete(input.workflow_id);
      });
      return result.then(async ({ event, written }) => {
        await written;
        return event;
      });
    },
    async replay(workflowId) {
      if (!cache) return [];
      const lines = await cache.lrange(logKey(workflowId), 0, -1);
      const events: TraceEvent[] = [];
      for (const line of lines) {
        const event = parseTraceEvent(line);
        if (event) events.push(event);
      }
      return events;
    },
    subscribe(workflowId, handler, subscribeOptions) {
      if (!cache) return Promise.reject(new Error("no cache store configured"));
      return cache.subscribe(
        traceChannel(workflowId),
        (message) => {
          // The store hands one message to every handler of a channel in turn: parse it once.
          if (message !== lastMessage) {
            lastMessage = message;
            lastEvent = parseTraceEvent(message);
          }
          if (lastEvent) handler(lastEvent, message);
        },
        subscribeOptions,
      );
    },
    history(workflowId, stepId) {
      return store.read(workflowId, stepId);
    },
    workflows: (limit) => store.workflows(limit),
    close: () => store.close(),
    async newStepId(workflowId) {
      const now = Math.floor(Date.now() / 1000);
      if (!cache) {
        const last = localSteps.get(workflowId) ?? 0;
        const second = Math.max(now, last + 1);
        if (localSteps.size >= 100_000) localSteps.clear();
        localSteps.set(workflowId, second);
        return `step_${second}`;
      }
      for (let second = now; ; second++) {
        const key = `trace_step:${workflowId}:${second}`;
        const claims = await cache.incr(key);
        if (claims === 1) {
          // Only needed while the second can still be claimed; then it is history.
          await cache.expire(key, 120);
          return `step_${second}`;
        }
      }
    },
    forStep(workflowId, stepId) {
      return {
        workflowId,
        stepId,
        async emit(type, data) {
          const input: TraceEventInput = { workflow_id: workflowId, step_id: stepId, type, data };
          try {
            await bus.publish(input);
          } catch (error) {
            options.onError?.(error, input);
          }
        },
      };
    },
  };
  return bus;
}
