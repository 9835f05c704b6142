import { readFile } from "node:fs/promises";
import { resolve, sep } from "node:path";
import { createFileRunStore } from "../runs/file-run-store.js";
import { createAppendHandles } from "./append-handles.js";
import { isValidTraceId, parseTraceEvent, type TraceEvent } from "./trace-event.js";
import { TraceHistoryError, type TraceStore } from "./trace-store.js";
import { createWorkflowIndex } from "./workflow-index.js";

interface FileQueue {
  workflowId: string;
  stepId: string;
  lines: string[];
  waiters: { resolve: () => void; reject: (error: unknown) => void }[];
}

export interface TraceFiles extends TraceStore {
  readonly dir: string;
}

/** JSON Lines trace files, one per workflow and step: `{dir}/{workflow_id}/{step_id}.jsonl`. */
export function createTraceFiles(dir: string): TraceFiles {
  const root = resolve(dir);
  const handles = createAppendHandles();
  const index = createWorkflowIndex(root);

  function pathFor(workflowId: string, stepId: string): string {
    // The pattern admits neither separators nor dot segments, so the joined path cannot leave
    // the directory; joining strings, not path.resolve, since this runs for every trace event.
    if (!isValidTraceId(workflowId) || !isValidTraceId(stepId)) {
      throw new TraceHistoryError("invalid_id", "workflow_id and step_id must match [A-Za-z0-9_-]");
    }
    return `${root}${sep}${workflowId}${sep}${stepId}.jsonl`;
  }

  // Lines waiting for each file: the lines of one turn go out in one append, and those queued
  // while a file is being opened wait for it, so lines land in the order they were queued.
  const queues = new Map<string, FileQueue>();

  async function flush(path: string, queue: FileQueue): Promise<void> {
    while (queue.lines.length > 0) {
      const lines = queue.lines.splice(0);
      const waiters = queue.waiters.splice(0);
      try {
        await handles.append(path, lines.join(""));
        index.touch(queue.workflowId, queue.stepId, Date.now());
        for (const w of waiters) w.resolve();
      } catch (error) {
        for (const w of waiters) w.reject(error);
      }
    }
    queues.delete(path);
  }

  return {
    dir: root,
    // A dot name is never a workflow id, so the run files stay out of the workflow list.
    runs: createFileRunStore(`${root}${sep}.runs`),
    append(event, json) {
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
          queue = { workflowId: event.workflow_id, stepId: event.step_id, lines: [], waiters: [] };
          queues.set(path, queue);
        }
        queue.lines.push(`${json ?? JSON.stringify(event)}\n`);
        queue.waiters.push({ resolve, reject });
        if (idle) void flush(path, queue);
      });
    },
    close: () => handles.close(),
    workflows: (limit) => index.list(limit),
    async read(workflowId, stepId) {
      const path = pathFor(workflowId, stepId);
      let text: string;
      try {
        text = await readFile(path, "utf8");
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === "ENOENT" || code === "ENOTDIR") {
          index.forget(workflowId, stepId);
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
