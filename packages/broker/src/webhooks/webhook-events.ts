import type { SqlExecutor } from "@atrium/kit";

/** Events a subscription can name; each one means a human may have to act on a connection. */
export const WEBHOOK_EVENT_TYPES = [
  "connection.created",
  "connection.attention_required",
  "connection.revoked",
  "connection.failed",
  "token.refresh_fatal",
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export const isWebhookEventType = (value: string): value is WebhookEventType =>
  (WEBHOOK_EVENT_TYPES as readonly string[]).includes(value);

/** What every event says about its connection; never a credential. */
export interface ConnectionEventData {
  connection_id: string;
  workspace_id: string;
  provider_id: string;
  [detail: string]: unknown;
}

/**
 * Puts the event in the outbox: one delivery row per enabled subscription to its type, written
 * with the executor of the state change it reports, so both commit or neither does. Fanned out
 * here rather than at delivery so each subscription has its own retry schedule and attempt log,
 * and a subscription created later never receives events from before it existed.
 */
export async function enqueueWebhookEvent(
  tx: SqlExecutor,
  type: WebhookEventType,
  data: ConnectionEventData,
  at = new Date(),
): Promise<number> {
  const body = JSON.stringify({ type, timestamp: at.toISOString(), data });
  const { rowCount } = await tx.query(
    `INSERT INTO broker_webhook_deliveries (id, webhook_id, event_type, body)
     SELECT 'msg_' || replace(gen_random_uuid()::text, '-', ''), id, $1, $2
       FROM broker_webhooks
      WHERE enabled AND $1 = ANY (event_types)`,
    [type, body],
  );
  return rowCount;
}
