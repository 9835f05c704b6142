import { readFile } from "node:fs/promises";
import { relative, resolve, sep } from "node:path";
import { createAppendHandles } from "./append-handles.js";
import { isValidTraceId, parseTraceEvent, type TraceEvent } from "./trace-event.js";

export type TraceHistoryFailure = "invalid_id" | "not_found" | "unreadable";

export class TraceHistoryError extends Error {
  constructor(
    readonly failure: TraceHistoryFailure,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "TraceHistoryError";
  }
}

interface FileQueue {
  lines: string[];
  waiters: { resolve: () => void; reject: (error: unknown) => void }[];
}

export interface TraceFiles {
  readonly dir: string;
  /** Queues one event for its step's file; settles once it is written. Written in call order. */
  append(event: TraceEvent): Promise<void>;
  read(workflowId: string, stepId: string): Promise<TraceEvent[]>;
  /** Closes the files kept open for appending (they also close after 2 s without writes). */
  close(): Promise<void>;
}

/** JSON Lines trace files, one per workflow and step: `{dir}/{workflow_id}/{step_id}.jsonl`. */
export function createTraceFiles(dir: string): TraceFiles {
  const root = resolve(dir);
  const handles = createAppendHandles();

  function pathFor(workflowId: string, stepId: string): string {
    if (!isValidTraceId(workflowId) || !isValidTraceId(stepId)) {
      throw new TraceHistoryError("invalid_id", "workflow_id and step_id must match [A-Za-z0-9_-]");
    }
    const path = resolve(root, workflowId, `${stepId}.jsonl`);
    // The id pattern already rules out traversal; this keeps the invariant if it ever loosens.
    const rel = relative(root, path);
    if (rel.startsWith("..") || rel.startsWith(sep)) {
      throw new TraceHistoryError("invalid_id", "path escapes the traces directory");
    }
    return path;
  }

  // Lines waiting for each file. Under load, many events coalesce into one append, and a file
  // is never written by two appends at once, so lines land in the order they were queued.
  const queues = new Map<string, FileQueue>();

  async function flush(path: string, queue: FileQueue): Promise<void> {
    while (queue.lines.length > 0) {
      const lines = queue.lines.splice(0);
      const waiters = queue.waiters.splice(0);
      try {
        await handles.append(path, lines.join(""));
        for (const w of waiters) w.resolve();
      } catch (error) {
        for (const w of waiters) w.reject(error);
      }
    }
    queues.delete(path);
  }

  return {
    dir: root,
    append(event) {
      let path: string;
      try {
        path = pathFor(event.workflow_id, event.step_id);
      } catch (error) {
        return Promise.reject(error);
      }
      return new Promise<void>((resolve, reject) => {
        let queue = queues.get(path);
        const idle = queue === undefined;
        if (!queue) {
          queue = { lines: [], waiters: [] };
          queues.set(path, queue);
        }
        queue.lines.push(`${JSON.stringify(event)}\n`);
        queue.waiters.push({ resolve, reject });
        if (idle) void flush(path, queue);
      });
    },
    close: () => handles.close(),
    async read(workflowId, stepId) {
      const path = pathFor(workflowId, stepId);
      let text: string;
      try {
        text = await readFile(path, "utf8");
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === "ENOENT" || code === "ENOTDIR") {
          throw new TraceHistoryError("not_found", `no trace for ${workflowId}/${stepId}`);
        }
        throw new TraceHistoryError("unreadable", `trace ${workflowId}/${stepId} cannot be read`, {
          cause: error,
        });
      }
      const events: TraceEvent[] = [];
      const lines = text.split("\n");
      // Every write ends with a newline, so the last segment is empty or a write still in flight.
      lines.pop();
      for (const line of lines) {
        if (line.trim() === "") continue;
        const event = parseTraceEvent(line);
        if (!event) {
          throw new TraceHistoryError("unreadable", `trace ${workflowId}/${stepId} is corrupt`);
        }
        events.push(event);
      }
      return events;
    },
  };
}
