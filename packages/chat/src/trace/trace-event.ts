import type { TraceEvent, TraceEventType } from "@atrium/sdk";

/**
 * One trace event as streamed, stored in the log and written to the trace file: the SDK's type,
 * since the stream is what its clients read. `seq` is the per-workflow sequence number (also the
 * SSE `id:`); events synthesized by a stream itself (`timeout`, the no-cache `error`) are not part
 * of the workflow and carry no `seq`.
 */
export type { TraceEvent, TraceEventType };

/** Every type, checked against the SDK's list both ways by the compiler. */
const everyType: Record<TraceEventType, true> = {
  thinking: true,
  tool_start: true,
  tool_result: true,
  llm_request: true,
  llm_response: true,
  step_complete: true,
  timeout: true,
  error: true,
};

/** The event types of the chat spec, exactly; nothing else is ever published or streamed. */
export const traceEventTypes = Object.keys(everyType) as TraceEventType[];

/** What a publisher supplies; the bus adds `seq` and, when absent, `timestamp`. */
export type TraceEventInput = Omit<TraceEvent, "seq" | "timestamp"> & { timestamp?: string };

/**
 * Workflow and step ids become path segments of trace files, so they are restricted to a
 * character set that cannot name a parent directory, a separator or a hidden file.
 */
const idPattern = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

export function isValidTraceId(id: unknown): id is string {
  return typeof id === "string" && idPattern.test(id);
}

export function parseTraceEvent(text: string): TraceEvent | undefined {
  try {
    const value = JSON.parse(text) as TraceEvent;
    if (value && typeof value === "object" && typeof value.type === "string") return value;
  } catch {
    // A corrupt line is skipped by callers; the log never holds one we wrote.
  }
  return undefined;
}
