import { isUniqueViolation, type Sql, type SqlExecutor } from "@atrium/kit";
import type {
  ApprovalDecision,
  ClaimResult,
  CreateResult,
  RunEvents,
  RunOutcome,
  RunRecord,
  RunRequest,
  RunResponse,
  RunStatus,
  RunStore,
} from "./run-store.js";

interface RunRow {
  workflow_id: string;
  step_id: string;
  status: RunStatus;
  request: RunRequest;
  checkpoint: unknown;
  response: RunResponse | null;
  reason: string | null;
  owner: string | null;
  lease_expires_at: Date | null;
  cancel_requested: boolean;
  pauses: number;
  decisions: ApprovalDecision[];
  created_at: Date;
  updated_at: Date;
}

function recordOf(row: RunRow): RunRecord {
  return {
    workflow_id: row.workflow_id,
    step_id: row.step_id,
    status: row.status,
    request: row.request,
    ...(row.checkpoint === null ? {} : { checkpoint: row.checkpoint }),
    ...(row.response === null ? {} : { response: row.response }),
    ...(row.reason === null ? {} : { reason: row.reason }),
    ...(row.owner === null ? {} : { owner: row.owner }),
    ...(row.lease_expires_at === null
      ? {}
      : { lease_expires_at: row.lease_expires_at.toISOString() }),
    cancel_requested: row.cancel_requested,
    pauses: row.pauses,
    ...(row.decisions.length === 0 ? {} : { decisions: row.decisions }),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

const lease = (param: string) => `now() + make_interval(secs => ${param}::double precision / 1000)`;

const insertRun = `INSERT INTO chat_runs AS r
  (workflow_id, step_id, status, request, owner, lease_expires_at)
VALUES ($1, $2, $3, $4::jsonb, $5, CASE WHEN $3 = 'running' THEN ${lease("$6")} END)
ON CONFLICT (workflow_id) WHERE status = 'running' DO NOTHING
RETURNING *`;

// Only the oldest queued step of an idle workflow may start; the unique index settles two hosts
// that both saw it idle.
const claimQueued = `UPDATE chat_runs r SET status = 'running', owner = $3,
  lease_expires_at = ${lease("$4")}, updated_at = now()
WHERE r.workflow_id = $1 AND r.step_id = $2 AND r.status = 'queued'
  AND NOT EXISTS (SELECT 1 FROM chat_runs o WHERE o.workflow_id = $1 AND o.status = 'running')
  AND NOT EXISTS (SELECT 1 FROM chat_runs o WHERE o.workflow_id = $1 AND o.status = 'queued'
    AND (o.created_at, o.step_id) < (r.created_at, r.step_id))
RETURNING *`;

const claimResume = `UPDATE chat_runs SET status = 'running', owner = $4,
  lease_expires_at = ${lease("$5")}, cancel_requested = false, updated_at = now(),
  decisions = decisions || COALESCE($6::jsonb, '[]'::jsonb)
WHERE workflow_id = $1 AND step_id = $2 AND status = 'yielded' AND pauses = $3
RETURNING *`;

// Newest pause first, keyset-paged on (updated_at, workflow_id, step_id); the time in the
// milliseconds a record shows, so that the last item of a page is an exact cursor.
const paused = "date_trunc('milliseconds', updated_at)";
const listYielded = `SELECT * FROM chat_runs
WHERE status = 'yielded'
  AND ($1::text IS NULL OR response->'pending' @> jsonb_build_array(jsonb_build_object('kind', $1::text)))
  AND ($3::timestamptz IS NULL OR (${paused}, workflow_id, step_id) < ($3::timestamptz, $4::text, $5::text))
ORDER BY ${paused} DESC, workflow_id DESC, step_id DESC
LIMIT $2`;

const finishRun = `UPDATE chat_runs SET status = $4, response = COALESCE($5::jsonb, response),
  checkpoint = $6::jsonb, reason = $7, lease_expires_at = NULL,
  pauses = pauses + CASE WHEN $4 = 'yielded' THEN 1 ELSE 0 END, updated_at = now()
WHERE workflow_id = $1 AND step_id = $2 AND status = 'running' AND owner = $3
RETURNING *`;

const renewLease = `UPDATE chat_runs SET lease_expires_at = ${lease("$4")}
WHERE workflow_id = $1 AND step_id = $2 AND status = 'running' AND owner = $3
RETURNING cancel_requested`;

// A queued or yielded run ends here; a running one is only marked, for its owner to stop.
const cancelRun = `WITH old AS (
  SELECT status FROM chat_runs WHERE workflow_id = $1 AND step_id = $2 FOR UPDATE
)
UPDATE chat_runs r SET
  status = CASE WHEN old.status IN ('queued', 'yielded') THEN 'cancelled' ELSE r.status END,
  reason = CASE WHEN old.status IN ('queued', 'yielded') THEN $3 ELSE r.reason END,
  checkpoint = CASE WHEN old.status IN ('queued', 'yielded') THEN NULL ELSE r.checkpoint END,
  cancel_requested = r.cancel_requested OR old.status = 'running',
  updated_at = now()
FROM old WHERE r.workflow_id = $1 AND r.step_id = $2
RETURNING r.*, old.status IN ('queued', 'yielded') AS changed`;

const expireLeases = `UPDATE chat_runs SET status = 'failed', lease_expires_at = NULL, updated_at = now(),
  reason = 'host ' || COALESCE(owner, '?') || ' stopped renewing its lease (it stopped or lost the database)'
WHERE status = 'running' AND lease_expires_at < now()
RETURNING *`;

const deleteOld = `DELETE FROM chat_runs
WHERE updated_at < now() - make_interval(secs => $1) AND status NOT IN ('queued', 'running')`;

export interface SqlRunStore extends RunStore {
  /** Deletes ended and yielded runs not written for `retentionSeconds`; the count. */
  sweep(retentionSeconds: number): Promise<number>;
}

/** Run state in PostgreSQL (table chat_runs, chat migration 0002), shared by every agent host. */
export function createSqlRunStore(sql: Sql, events?: RunEvents): SqlRunStore {
  const addWithin = events?.outbox.addWithin;
  if (events && !addWithin) {
    throw new Error("the PostgreSQL run store records its events in a PostgreSQL outbox only");
  }

  /**
   * A transition's statement, and with events the events of the rows it `reports`, in one
   * transaction: both are committed or neither.
   */
  async function transition(
    text: string,
    params: unknown[],
    reports: (row: RunRow) => boolean = () => true,
  ): Promise<RunRow[]> {
    if (!events || !addWithin) return (await sql.query<RunRow>(text, params)).rows;
    return sql.transaction(async (tx: SqlExecutor) => {
      const { rows } = await tx.query<RunRow>(text, params);
      for (const row of rows) {
        const event = reports(row) ? events.eventOf(recordOf(row)) : undefined;
        if (event) await addWithin(tx, event);
      }
      return rows;
    });
  }

  const one = async (text: string, params: unknown[]) =>
    (await sql.query<RunRow>(text, params)).rows[0];

  async function claim(text: string, params: unknown[], workflowId: string, stepId: string) {
    let row: RunRow | undefined;
    try {
      row = await one(text, params);
    } catch (error) {
      // The one running step of a workflow is held by a partial unique index: a claim may hit it.
      if (isUniqueViolation(error)) return { busy: true } as const;
      throw error;
    }
    if (row) return { claimed: recordOf(row) };
    const current = await one("SELECT * FROM chat_runs WHERE workflow_id = $1 AND step_id = $2", [
      workflowId,
      stepId,
    ]);
    return { stale: current ? recordOf(current) : undefined };
  }

  return {
    async create(run): Promise<CreateResult> {
      const row = await one(insertRun, [
        run.workflowId,
        run.stepId,
        run.status,
        JSON.stringify(run.request),
        run.owner,
        run.leaseMs,
      ]);
      if (row) return { created: recordOf(row) };
      const busy = await this.running(run.workflowId);
      if (busy) return { busy };
      // The running step ended between the insert and the look-up: try once more.
      return this.create(run);
    },
    async get(workflowId, stepId) {
      const row = await one("SELECT * FROM chat_runs WHERE workflow_id = $1 AND step_id = $2", [
        workflowId,
        stepId,
      ]);
      return row ? recordOf(row) : undefined;
    },
    async running(workflowId) {
      const row = await one(
        "SELECT * FROM chat_runs WHERE workflow_id = $1 AND status = 'running'",
        [workflowId],
      );
      return row ? recordOf(row) : undefined;
    },
    async claimQueued(workflowId, stepId, owner, leaseMs): Promise<ClaimResult> {
      const result = await claim(
        claimQueued,
        [workflowId, stepId, owner, leaseMs],
        workflowId,
        stepId,
      );
      // Still queued: another step runs or is ahead of it.
      return "stale" in result && result.stale?.status === "queued" ? { busy: true } : result;
    },
    claimResume(workflowId, stepId, pause, owner, leaseMs, decision): Promise<ClaimResult> {
      return claim(
        claimResume,
        [workflowId, stepId, pause, owner, leaseMs, decision ? JSON.stringify([decision]) : null],
        workflowId,
        stepId,
      );
    },
    async listYielded(query) {
      const { rows } = await sql.query<RunRow>(listYielded, [
        query.pending ?? null,
        query.limit,
        query.after?.updated_at ?? null,
        query.after?.workflow_id ?? null,
        query.after?.step_id ?? null,
      ]);
      return rows.map(recordOf);
    },
    async finish(workflowId, stepId, owner, outcome: RunOutcome) {
      const rows = await transition(finishRun, [
        workflowId,
        stepId,
        owner,
        outcome.status,
        outcome.response === undefined ? null : JSON.stringify(outcome.response),
        outcome.checkpoint === undefined ? null : JSON.stringify(outcome.checkpoint),
        outcome.reason ?? null,
      ]);
      return rows.length === 1;
    },
    async renew(workflowId, stepId, owner, leaseMs) {
      const { rows } = await sql.query<{ cancel_requested: boolean }>(renewLease, [
        workflowId,
        stepId,
        owner,
        leaseMs,
      ]);
      return rows[0] ? { cancelRequested: rows[0].cancel_requested } : undefined;
    },
    async cancel(workflowId, stepId, reason) {
      const changed = (row: RunRow) => (row as RunRow & { changed: boolean }).changed;
      const [row] = await transition(cancelRun, [workflowId, stepId, reason], changed);
      if (!row) return undefined;
      return { run: recordOf(row), changed: changed(row) };
    },
    async expire() {
      return (await transition(expireLeases, [])).map(recordOf);
    },
    withEvents(withEvents) {
      return createSqlRunStore(sql, withEvents);
    },
    async sweep(retentionSeconds) {
      const { rowCount } = await sql.query(deleteOld, [retentionSeconds]);
      return rowCount;
    },
  };
}
