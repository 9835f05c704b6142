import type { Sql, SqlExecutor } from "@atrium/kit";
import type { TransitionEvent } from "../runs/run-store.js";
import type { StepEvent } from "./step-events.js";
import type { OutboxEntry, WebhookOutbox } from "./webhook-outbox.js";

interface EntryRow {
  id: string;
  event_type: StepEvent["type"];
  body: string;
  attempts: number;
  created_at: Date;
}

// FOR UPDATE SKIP LOCKED: hosts sharing the database never take the same entry at once; the
// entry of a host that died is taken over once its lease lapses.
const claimDue = `WITH due AS (
  SELECT id FROM chat_webhook_outbox
   WHERE status = 'pending' AND next_attempt_at <= now()
     AND (lease_until IS NULL OR lease_until < now())
   ORDER BY next_attempt_at
   LIMIT $3
   FOR UPDATE SKIP LOCKED)
UPDATE chat_webhook_outbox o
   SET lease_owner = $1, lease_until = now() + make_interval(secs => $2::double precision / 1000)
  FROM due WHERE o.id = due.id
RETURNING o.id, o.event_type, o.body, o.attempts, o.created_at`;

/** The outbox in `chat_webhook_outbox` (migration 0004), shared by every host of the database. */
export function createSqlWebhookOutbox(sql: Sql): WebhookOutbox {
  const addWithin = async (tx: SqlExecutor, event: TransitionEvent) => {
    await tx.query(
      `INSERT INTO chat_webhook_outbox (id, event_type, body) VALUES ($1, $2, $3)
       ON CONFLICT (id) DO NOTHING`,
      [event.id, event.type, event.body],
    );
  };
  return {
    add: (event) => addWithin(sql, event),
    // The run store's transition and its event commit together (run-store.ts, withEvents).
    addWithin,
    async claim(owner, leaseMs, limit) {
      const { rows } = await sql.query<EntryRow>(claimDue, [owner, leaseMs, limit]);
      return rows.map(
        (row): OutboxEntry => ({
          id: row.id,
          type: row.event_type,
          body: row.body,
          attempts: row.attempts,
          created_at: row.created_at.toISOString(),
        }),
      );
    },
    async settle(id, owner, result) {
      await sql.query(
        `UPDATE chat_webhook_outbox
            SET attempts = attempts + 1, lease_owner = NULL, lease_until = NULL,
                status = CASE WHEN $3 THEN 'delivered' WHEN $5::timestamptz IS NULL THEN 'failed'
                              ELSE 'pending' END,
                last_error = $4, next_attempt_at = COALESCE($5::timestamptz, next_attempt_at),
                settled_at = CASE WHEN $3 OR $5::timestamptz IS NULL THEN now() END
          WHERE id = $1 AND lease_owner = $2 AND status = 'pending'`,
        [
          id,
          owner,
          result.delivered,
          result.delivered ? null : result.error,
          result.delivered ? null : (result.retryAt ?? null),
        ],
      );
    },
    async release(id, owner) {
      await sql.query(
        `UPDATE chat_webhook_outbox SET lease_owner = NULL, lease_until = NULL
          WHERE id = $1 AND lease_owner = $2 AND status = 'pending'`,
        [id, owner],
      );
    },
    async sweep(retentionSeconds) {
      const { rowCount } = await sql.query(
        `DELETE FROM chat_webhook_outbox
          WHERE status <> 'pending' AND settled_at < now() - make_interval(secs => $1)`,
        [retentionSeconds],
      );
      return rowCount;
    },
  };
}
