import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { isValidTraceId } from "./trace-event.js";

export interface WorkflowTraces {
  workflow_id: string;
  updated_at: string;
  /** Most recent first. */
  steps: { step_id: string; updated_at: string }[];
}

export interface WorkflowIndex {
  /** Records a write to a step's trace file at `atMs`. */
  touch(workflowId: string, stepId: string, atMs: number): void;
  /** Drops a step whose file is gone (removed by hand), and its workflow once it has no step. */
  forget(workflowId: string, stepId: string): void;
  /** The workflows, most recently written first, with their steps. */
  list(limit: number): Promise<WorkflowTraces[]>;
}

/**
 * The workflows of a traces directory, kept in memory: the directory is read once, at the first
 * listing, and from then on the writes of this process keep the index current. Listing used to
 * read every workflow directory and stat every step file per call, which grows with all the
 * traces ever written and is what a console polls.
 */
export function createWorkflowIndex(root: string): WorkflowIndex {
  // workflow → step → last write (ms). The map's order is the workflows' recency: a write moves
  // its workflow to the end, so listing needs no sort.
  let byWorkflow = new Map<string, Map<string, number>>();
  let scanned: Promise<void> | undefined;

  function stepsOf(workflowId: string): Map<string, number> {
    let steps = byWorkflow.get(workflowId);
    if (!steps) {
      steps = new Map();
      byWorkflow.set(workflowId, steps);
    }
    return steps;
  }

  function touch(workflowId: string, stepId: string, atMs: number): void {
    const steps = stepsOf(workflowId);
    byWorkflow.delete(workflowId);
    byWorkflow.set(workflowId, steps);
    steps.set(stepId, atMs);
  }

  async function readDirectory(): Promise<[string, string, number][]> {
    const entries = await readdir(root, { withFileTypes: true }).catch((error) => {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw error;
    });
    const found: [string, string, number][] = [];
    for (const entry of entries) {
      if (!entry.isDirectory() || !isValidTraceId(entry.name)) continue;
      const names = await readdir(join(root, entry.name));
      await Promise.all(
        names.map(async (name) => {
          const stepId = name.slice(0, -".jsonl".length);
          if (!name.endsWith(".jsonl") || !isValidTraceId(stepId)) return;
          const { mtimeMs } = await stat(join(root, entry.name, name));
          found.push([entry.name, stepId, mtimeMs]);
        }),
      );
    }
    return found;
  }

  async function scan(): Promise<void> {
    const found = await readDirectory();
    // Writes made while the directory was read are in the index already; a step keeps its later
    // time, and the workflows are put in recency order once.
    for (const [workflowId, stepId, mtimeMs] of found) {
      const steps = stepsOf(workflowId);
      if ((steps.get(stepId) ?? 0) < mtimeMs) steps.set(stepId, mtimeMs);
    }
    byWorkflow = new Map([...byWorkflow].sort((a, b) => latest(a[1]) - latest(b[1])));
  }

  return {
    touch,
    forget(workflowId, stepId) {
      const steps = byWorkflow.get(workflowId);
      if (steps?.delete(stepId) && steps.size === 0) byWorkflow.delete(workflowId);
    },
    async list(limit) {
      scanned ??= scan().catch((error) => {
        scanned = undefined;
        throw error;
      });
      await scanned;
      const ids = [...byWorkflow.keys()];
      const listed: WorkflowTraces[] = [];
      for (let i = ids.length - 1; i >= 0 && listed.length < limit; i--) {
        // Reversed first: of steps written in the same millisecond, the later one comes first.
        const steps = [...(byWorkflow.get(ids[i]) as Map<string, number>)]
          .reverse()
          .sort((a, b) => b[1] - a[1])
          .map(([step_id, at]) => ({ step_id, updated_at: new Date(at).toISOString() }));
        listed.push({ workflow_id: ids[i], updated_at: steps[0].updated_at, steps });
      }
      return listed;
    },
  };
}

function latest(steps: Map<string, number>): number {
  let max = 0;
  for (const at of steps.values()) if (at > max) max = at;
  return max;
}
