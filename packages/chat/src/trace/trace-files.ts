import { appendFile, mkdir, readFile } from "node:fs/promises";
import { join, relative, resolve, sep } from "node:path";
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

export interface TraceFiles {
  readonly dir: string;
  append(event: TraceEvent): Promise<void>;
  read(workflowId: string, stepId: string): Promise<TraceEvent[]>;
}

/** JSON Lines trace files, one per workflow and step: `{dir}/{workflow_id}/{step_id}.jsonl`. */
export function createTraceFiles(dir: string): TraceFiles {
  const root = resolve(dir);
  const createdDirs = new Set<string>();

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

  return {
    dir: root,
    async append(event) {
      const path = pathFor(event.workflow_id, event.step_id);
      const workflowDir = join(root, event.workflow_id);
      if (!createdDirs.has(workflowDir)) {
        await mkdir(workflowDir, { recursive: true });
        createdDirs.add(workflowDir);
      }
      await appendFile(path, `${JSON.stringify(event)}\n`);
    },
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
