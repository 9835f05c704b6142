import { fileURLToPath } from "node:url";
import {
  createGroupCommit,
  createPeriodicPass,
  type MigrationLogger,
  runMigrations,
  type Sql,
} from "@atrium/kit";
import { createSqlRunStore } from "../runs/sql-run-store.js";
import { isValidTraceId, parseTraceEvent, type TraceEvent } from "./trace-event.js";
import { TraceHistoryError, type TraceStore } from "./trace-store.js";
import type { WorkflowTraces } from "./workflow-index.js";

/** packages/chat/migrations, from src/trace and from dist/trace alike. */
export const chatMigrationsDir = fileURLToPath(new URL("../../migrations", import.meta.url));

export function migrateChat(sql: Sql, logger?: MigrationLogger): Promise<string[]> {
  return runMigrations(sql, { dir: chatMigrationsDir, namespace: "chat", logger });
}

export interface SqlTraceStoreOptions {
  /** A database with the chat migrations applied. */
  sql: Sql;
  /** Seconds a step is kept after its last event (TRACE_RETENTION, as the stream's log). */
  retentionSeconds: number;
  /**
   * Least time between two batches of events (one INSERT, one commit each). Default 10 ms:
   * at most 100 commits a second per host, whatever the event rate.
   */
  writeIntervalMs?: number;
  /** Pause between retention sweeps. Default 5 minutes. */
  sweepIntervalMs?: number;
  /** Told about a sweep that failed; the next one still runs. */
  onError?: (error: unknown) => void;
}

export interface SqlTraceStore extends TraceStore {
  /**
   * Deletes the steps not written for the retention period, then empty workflows, and the runs
   * that ended (or wait for a resume) as long; the count of steps.
   */
  sweep(): Promise<number>;
}

interface Row {
  workflowId: string;
  stepId: string;
  seq: number | null;
  line: string;
  /** Whether this event also records its step's and workflow's last write. */
  touch: boolean;
}

/**
 * A step's last write is recorded at most this often per host (its first event always): the
 * list's `updated_at` and retention are then up to a second behind the newest event, and most
 * batches are one plain INSERT instead of an INSERT and two upserts.
 */
const touchIntervalMs = 1000;

const insertEvents = `INSERT INTO chat_trace_events (workflow_id, step_id, seq, line)
SELECT workflow_id, step_id, seq, line
FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[])
  WITH ORDINALITY AS b(workflow_id, step_id, seq, line, n)
ORDER BY n`;

// One statement for a batch with steps to touch: the events, then those steps' and workflows'
// last write, which the list and the sweep read by index. Rows are upserted in key order so that
// two hosts writing the same workflows lock them in the same order. GREATEST keeps a time from
// going back when a transaction that started earlier commits later.
const insertAndTouch = `WITH events AS (${insertEvents}),
touched AS (
  SELECT DISTINCT workflow_id, step_id FROM unnest($5::text[], $6::text[]) AS t(workflow_id, step_id)
), steps AS (
  INSERT INTO chat_trace_steps AS s (workflow_id, step_id, updated_at)
  SELECT workflow_id, step_id, now() FROM touched ORDER BY workflow_id, step_id
  ON CONFLICT (workflow_id, step_id)
  DO UPDATE SET updated_at = GREATEST(s.updated_at, excluded.updated_at)
)
INSERT INTO chat_trace_workflows AS w (workflow_id, updated_at)
SELECT DISTINCT workflow_id, now() FROM touched ORDER BY workflow_id
ON CONFLICT (workflow_id) DO UPDATE SET updated_at = GREATEST(w.updated_at, excluded.updated_at)`;

const selectStep = `SELECT line FROM chat_trace_events
WHERE workflow_id = $1 AND step_id = $2 ORDER BY seq, id`;

const selectRecent = `WITH recent AS (
  SELECT workflow_id, updated_at FROM chat_trace_workflows
  ORDER BY updated_at DESC, workflow_id DESC LIMIT $1
)
SELECT r.workflow_id, s.step_id, s.updated_at
FROM recent r JOIN chat_trace_steps s USING (workflow_id)
ORDER BY r.updated_at DESC, r.workflow_id DESC, s.updated_at DESC, s.step_id DESC`;

// A step's events go with it; a workflow goes once its last write is past the period too, so
// none is listed without steps (a step written meanwhile re-creates its workflow's row).
const deleteExpired = `WITH gone AS (
  DELETE FROM chat_trace_steps WHERE updated_at < now() - make_interval(secs => $1)
  RETURNING workflow_id, step_id
), events AS (
  DELETE FROM chat_trace_events e USING gone g
  WHERE e.workflow_id = g.workflow_id AND e.step_id = g.step_id
), workflows AS (
  DELETE FROM chat_trace_workflows WHERE updated_at < now() - make_interval(secs => $1)
)
SELECT count(*)::int AS steps FROM gone`;

/**
 * Trace history in PostgreSQL, so every agent host answers history and the workflow list for
 * steps any of them ran. Appends go through a group commit: one INSERT carries the events that
 * arrived while the previous one was in flight, and batches start at least `writeIntervalMs`
 * apart. Batched only as fast as round trips allowed, a thousand events a second were about 500
 * commits of two, and a commit's fixed cost was most of PostgreSQL's CPU; spaced 10 ms apart
 * they are 100 commits of ten. An append settles once its batch committed,
 * so an event a step awaited (its step_complete before the step answers) is in history on every
 * host; the live stream does not wait for it (it reads the cache's log and channel).
 */
export function createSqlTraceStore(options: SqlTraceStoreOptions): SqlTraceStore {
  const { sql, retentionSeconds } = options;
  const writer = createGroupCommit<Row, void>(
    async (rows) => {
      const events = [
        rows.map((r) => r.workflowId),
        rows.map((r) => r.stepId),
        rows.map((r) => r.seq),
        rows.map((r) => r.line),
      ];
      const touched = rows.filter((r) => r.touch);
      if (touched.length === 0) await sql.query(insertEvents, events);
      else {
        await sql.query(insertAndTouch, [
          ...events,
          touched.map((r) => r.workflowId),
          touched.map((r) => r.stepId),
        ]);
      }
      return rows.map(() => undefined);
    },
    { minIntervalMs: options.writeIntervalMs ?? 10 },
  );
  // step key → when this host last recorded its last write.
  const lastTouch = new Map<string, number>();
  function dueForTouch(workflowId: string, stepId: string): boolean {
    const key = `${workflowId}/${stepId}`;
    const now = Date.now();
    if (now - (lastTouch.get(key) ?? 0) < touchIntervalMs) return false;
    if (lastTouch.size >= 100_000) lastTouch.clear();
    lastTouch.set(key, now);
    return true;
  }
  const runs = createSqlRunStore(sql);
  const sweep = async () => {
    const { rows } = await sql.query<{ steps: number }>(deleteExpired, [retentionSeconds]);
    await runs.sweep(retentionSeconds);
    return rows[0]?.steps ?? 0;
  };
  const sweeper = createPeriodicPass({
    intervalMs: options.sweepIntervalMs ?? 5 * 60_000,
    run: sweep,
    onError: options.onError ?? (() => undefined),
  });
  sweeper.start();

  function checkIds(workflowId: string, stepId: string): void {
    if (!isValidTraceId(workflowId) || !isValidTraceId(stepId)) {
      throw new TraceHistoryError("invalid_id", "workflow_id and step_id must match [A-Za-z0-9_-]");
    }
  }

  return {
    sweep,
    runs,
    async append(event, json) {
      checkIds(event.workflow_id, event.step_id);
      const line = json ?? JSON.stringify(event);
      const { workflow_id: workflowId, step_id: stepId } = event;
      const touch = dueForTouch(workflowId, stepId);
      try {
        await writer.write([{ workflowId, stepId, seq: event.seq ?? null, line, touch }]);
      } catch (error) {
        // Not recorded: the next event of the step records it.
        if (touch) lastTouch.delete(`${workflowId}/${stepId}`);
        throw error;
      }
    },
    async read(workflowId, stepId) {
      checkIds(workflowId, stepId);
      let lines: { line: string }[];
      try {
        ({ rows: lines } = await sql.query<{ line: string }>(selectStep, [workflowId, stepId]));
      } catch (error) {
        throw new TraceHistoryError("unreadable", `trace ${workflowId}/${stepId} cannot be read`, {
          cause: error,
        });
      }
      if (lines.length === 0) {
        throw new TraceHistoryError("not_found", `no trace for ${workflowId}/${stepId}`);
      }
      const events: TraceEvent[] = [];
      for (const { line } of lines) {
        const event = parseTraceEvent(line);
        if (!event) {
          throw new TraceHistoryError("unreadable", `trace ${workflowId}/${stepId} is corrupt`);
        }
        events.push(event);
      }
      return events;
    },
    async workflows(limit) {
      const { rows } = await sql.query<{ workflow_id: string; step_id: string; updated_at: Date }>(
        selectRecent,
        [limit],
      );
      const listed: WorkflowTraces[] = [];
      for (const row of rows) {
        const step = { step_id: row.step_id, updated_at: row.updated_at.toISOString() };
        const last = listed.at(-1);
        if (last?.workflow_id === row.workflow_id) last.steps.push(step);
        else
          listed.push({ workflow_id: row.workflow_id, updated_at: step.updated_at, steps: [step] });
      }
      return listed;
    },
    close: () => sweeper.stop(),
  };
}
