import { mkdir, readdir, readFile, rename, writeFile } from "node:fs/promises";
import { sep } from "node:path";
import {
  type ClaimResult,
  type CreateResult,
  isFinal,
  newestFirst,
  type RunOutcome,
  type RunRecord,
  type RunStore,
} from "./run-store.js";

const isoIn = (ms: number) => new Date(Date.now() + ms).toISOString();

/**
 * Run state of one host in JSON files, `{dir}/{workflow_id}/{step_id}.json`, beside the trace
 * files. The process holding the directory is the only writer, so a transition is a check and a
 * change in one synchronous turn, then written (to a temporary file renamed over the old one,
 * so a crash leaves the old state or the new one). The runs that have not ended are read into
 * memory at first use and kept there until they end; an ended run is read from its file.
 */
export function createFileRunStore(dir: string): RunStore {
  const runs = new Map<string, RunRecord>();
  const key = (workflowId: string, stepId: string) => `${workflowId}/${stepId}`;
  const writes = new Map<string, Promise<void>>();
  let loaded: Promise<void> | undefined;

  async function load(): Promise<void> {
    let workflows: string[];
    try {
      workflows = await readdir(dir);
    } catch {
      return;
    }
    for (const workflowId of workflows) {
      let files: string[];
      try {
        files = await readdir(`${dir}${sep}${workflowId}`);
      } catch {
        continue;
      }
      for (const file of files.filter((f) => f.endsWith(".json"))) {
        try {
          const run = JSON.parse(
            await readFile(`${dir}${sep}${workflowId}${sep}${file}`, "utf8"),
          ) as RunRecord;
          if (!isFinal(run.status) && !runs.has(key(run.workflow_id, run.step_id)))
            runs.set(key(run.workflow_id, run.step_id), run);
        } catch {
          // A file cut short by a crash before its rename never replaced a good one.
        }
      }
    }
  }
  /** A run in memory, or an ended one from its file. */
  async function find(workflowId: string, stepId: string): Promise<RunRecord | undefined> {
    const run = runs.get(key(workflowId, stepId));
    if (run) return { ...run };
    await writes.get(key(workflowId, stepId));
    try {
      return JSON.parse(
        await readFile(`${dir}${sep}${workflowId}${sep}${stepId}.json`, "utf8"),
      ) as RunRecord;
    } catch {
      return undefined;
    }
  }
  /** Writes the run and, once it has ended, keeps it on disk only. */
  async function saveAndSettle(run: RunRecord): Promise<void> {
    if (isFinal(run.status)) runs.delete(key(run.workflow_id, run.step_id));
    await save(run);
  }

  const ready = () => {
    loaded ??= load();
    return loaded;
  };

  /** Writes the run's current state; writes of one run go out in order. */
  function save(run: RunRecord): Promise<void> {
    const id = key(run.workflow_id, run.step_id);
    const folder = `${dir}${sep}${run.workflow_id}`;
    const path = `${folder}${sep}${run.step_id}.json`;
    const text = JSON.stringify(run);
    const previous = writes.get(id) ?? Promise.resolve();
    const next = previous
      .catch(() => undefined)
      .then(async () => {
        await mkdir(folder, { recursive: true });
        await writeFile(`${path}.tmp`, text);
        await rename(`${path}.tmp`, path);
      });
    writes.set(id, next);
    void next
      .finally(() => {
        if (writes.get(id) === next) writes.delete(id);
      })
      .catch(() => undefined);
    return next;
  }

  function change(run: RunRecord, patch: Partial<RunRecord>): RunRecord {
    Object.assign(run, patch, { updated_at: new Date().toISOString() });
    return run;
  }

  const runningOf = (workflowId: string) => {
    for (const run of runs.values())
      if (run.workflow_id === workflowId && run.status === "running") return run;
    return undefined;
  };

  const leaseExpired = (run: RunRecord) =>
    run.status === "running" &&
    run.lease_expires_at !== undefined &&
    Date.parse(run.lease_expires_at) < Date.now();

  async function claimed(run: RunRecord): Promise<ClaimResult> {
    await save(run);
    return { claimed: { ...run } };
  }

  return {
    async create(run): Promise<CreateResult> {
      await ready();
      const busy = run.status === "running" ? runningOf(run.workflowId) : undefined;
      if (busy) return { busy: { ...busy } };
      const now = new Date().toISOString();
      const record: RunRecord = {
        workflow_id: run.workflowId,
        step_id: run.stepId,
        status: run.status,
        request: run.request,
        owner: run.owner,
        ...(run.status === "running" ? { lease_expires_at: isoIn(run.leaseMs) } : {}),
        cancel_requested: false,
        pauses: 0,
        created_at: now,
        updated_at: now,
      };
      runs.set(key(run.workflowId, run.stepId), record);
      await save(record);
      return { created: { ...record } };
    },
    async get(workflowId, stepId) {
      await ready();
      return find(workflowId, stepId);
    },
    async running(workflowId) {
      await ready();
      const run = runningOf(workflowId);
      return run ? { ...run } : undefined;
    },
    async claimQueued(workflowId, stepId, owner, leaseMs) {
      await ready();
      const run = runs.get(key(workflowId, stepId));
      if (run?.status !== "queued") return { stale: await find(workflowId, stepId) };
      if (runningOf(workflowId)) return { busy: true };
      for (const other of runs.values()) {
        const older =
          other.created_at < run.created_at ||
          (other.created_at === run.created_at && other.step_id < run.step_id);
        if (other.workflow_id === workflowId && other.status === "queued" && older) {
          return { busy: true };
        }
      }
      return claimed(change(run, { status: "running", owner, lease_expires_at: isoIn(leaseMs) }));
    },
    async claimResume(workflowId, stepId, pause, owner, leaseMs, decision) {
      await ready();
      const run = runs.get(key(workflowId, stepId));
      if (run?.status !== "yielded" || run.pauses !== pause) {
        return { stale: await find(workflowId, stepId) };
      }
      if (runningOf(workflowId)) return { busy: true };
      return claimed(
        change(run, {
          status: "running",
          owner,
          lease_expires_at: isoIn(leaseMs),
          cancel_requested: false,
          ...(decision ? { decisions: [...(run.decisions ?? []), decision] } : {}),
        }),
      );
    },
    async listYielded(query) {
      await ready();
      // A yielded run has not ended, so every one is in memory.
      const { after } = query;
      return [...runs.values()]
        .filter(
          (run) =>
            run.status === "yielded" &&
            (!query.pending ||
              (run.response?.pending ?? []).some((p) => p.kind === query.pending)) &&
            (!after || newestFirst(after, run) < 0),
        )
        .sort(newestFirst)
        .slice(0, query.limit)
        .map((run) => ({ ...run }));
    },
    async finish(workflowId, stepId, owner, outcome: RunOutcome) {
      await ready();
      const run = runs.get(key(workflowId, stepId));
      if (run?.status !== "running" || run.owner !== owner) return false;
      change(run, {
        status: outcome.status,
        response: outcome.response ?? run.response,
        checkpoint: outcome.checkpoint,
        reason: outcome.reason,
        lease_expires_at: undefined,
        pauses: run.pauses + (outcome.status === "yielded" ? 1 : 0),
      });
      await saveAndSettle(run);
      return true;
    },
    async renew(workflowId, stepId, owner, leaseMs) {
      await ready();
      const run = runs.get(key(workflowId, stepId));
      if (run?.status !== "running" || run.owner !== owner) return undefined;
      run.lease_expires_at = isoIn(leaseMs);
      await save(run);
      return { cancelRequested: run.cancel_requested };
    },
    async cancel(workflowId, stepId, reason) {
      await ready();
      const run = runs.get(key(workflowId, stepId));
      if (!run) {
        const ended = await find(workflowId, stepId);
        return ended ? { run: ended, changed: false } : undefined;
      }
      if (run.status === "queued" || run.status === "yielded") {
        change(run, { status: "cancelled", reason, checkpoint: undefined });
        await saveAndSettle(run);
        return { run: { ...run }, changed: true };
      }
      if (run.status === "running" && !run.cancel_requested) {
        change(run, { cancel_requested: true });
        await save(run);
      }
      return { run: { ...run }, changed: false };
    },
    async expire() {
      await ready();
      const expired: RunRecord[] = [];
      for (const run of runs.values()) {
        if (!leaseExpired(run) || isFinal(run.status)) continue;
        change(run, {
          status: "failed",
          lease_expires_at: undefined,
          reason: `host ${run.owner ?? "?"} stopped renewing its lease (it stopped or lost the database)`,
        });
        await saveAndSettle(run);
        expired.push({ ...run });
      }
      return expired;
    },
  };
}
