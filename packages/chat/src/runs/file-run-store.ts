import { mkdir, readdir, readFile, rename, writeFile } from "node:fs/promises";
import { sep } from "node:path";
import {
  type ClaimResult,
  type CreateResult,
  isFinal,
  newestFirst,
  type RunEvents,
  type RunOutcome,
  type RunRecord,
  type RunStore,
  type TransitionEvent,
} from "./run-store.js";

const isoIn = (ms: number) => new Date(Date.now() + ms).toISOString();

/** A run file: the record, and the events of its transitions the outbox does not have yet. */
interface RunFile extends RunRecord {
  outbox_events?: TransitionEvent[];
}

function recordOf(file: RunFile): RunRecord {
  const { outbox_events: _events, ...run } = file;
  return run;
}

/**
 * Run state of one host in JSON files, `{dir}/{workflow_id}/{step_id}.json`, beside the trace
 * files. The process holding the directory is the only writer, so a transition is a check and a
 * change in one synchronous turn, then written (to a temporary file renamed over the old one,
 * so a crash leaves the old state or the new one). The runs that have not ended are read into
 * memory at first use and kept there until they end; an ended run is read from its file.
 *
 * With events (`withEvents`), a transition's event is written in the run's file with the
 * transition, then handed to the outbox and cleared from the file; a crash in between leaves it
 * in the file, and it is handed over again when the files are next read (the outbox keeps one
 * per id).
 */
export function createFileRunStore(dir: string): RunStore {
  const runs = new Map<string, RunRecord>();
  /** Events written in run files and not yet in the outbox, with the run to rewrite without them. */
  const unrecorded = new Map<string, { run: RunRecord; events: TransitionEvent[] }>();
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
          const stored = JSON.parse(
            await readFile(`${dir}${sep}${workflowId}${sep}${file}`, "utf8"),
          ) as RunFile;
          const run = recordOf(stored);
          const id = key(run.workflow_id, run.step_id);
          if (stored.outbox_events?.length) {
            unrecorded.set(id, { run, events: stored.outbox_events });
          }
          if (!isFinal(run.status) && !runs.has(id)) runs.set(id, run);
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
      return recordOf(
        JSON.parse(
          await readFile(`${dir}${sep}${workflowId}${sep}${stepId}.json`, "utf8"),
        ) as RunFile,
      );
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

  /** Writes the run's current state and its unrecorded events; writes of one run go out in order. */
  function save(run: RunRecord): Promise<void> {
    const id = key(run.workflow_id, run.step_id);
    const folder = `${dir}${sep}${run.workflow_id}`;
    const path = `${folder}${sep}${run.step_id}.json`;
    const events = unrecorded.get(id)?.events;
    const text = JSON.stringify(events?.length ? { ...run, outbox_events: events } : run);
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

  /** Notes the event of the run's transition, so that the run's next write carries it. */
  function noteEvent(run: RunRecord, events: RunEvents | undefined): void {
    const event = events?.eventOf({ ...run });
    if (!event) return;
    const id = key(run.workflow_id, run.step_id);
    unrecorded.set(id, { run: { ...run }, events: [...(unrecorded.get(id)?.events ?? []), event] });
  }

  /** Hands the events written in run files to the outbox, then rewrites those runs without them. */
  async function handOver(events: RunEvents | undefined): Promise<void> {
    if (!events) return;
    for (const [id, { run, events: sent }] of [...unrecorded]) {
      try {
        for (const event of sent) await events.outbox.add(event);
      } catch (error) {
        events.onError(error, "step event");
        continue;
      }
      const left = (unrecorded.get(id)?.events ?? []).filter((event) => !sent.includes(event));
      if (left.length > 0) unrecorded.set(id, { run, events: left });
      else unrecorded.delete(id);
      await save(runs.get(id) ?? run);
    }
  }

  const storeWith = (events?: RunEvents): RunStore => ({
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
      noteEvent(run, events);
      await saveAndSettle(run);
      await handOver(events);
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
        noteEvent(run, events);
        await saveAndSettle(run);
        await handOver(events);
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
        noteEvent(run, events);
        await saveAndSettle(run);
        expired.push({ ...run });
      }
      // Also the events a crash left in run files, read at start-up.
      await handOver(events);
      return expired;
    },
    withEvents: (withEvents) => storeWith(withEvents),
  });

  return storeWith();
}
