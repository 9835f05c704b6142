import { randomUUID } from "node:crypto";
import {
  AtriumError,
  Code,
  generateWebhookSecret,
  invalidArgument,
  isUniqueViolation,
  type Sql,
  webhookSecretKey,
} from "@atrium/kit";
import { type CallerContext, writeAuditEvent } from "../audit/audit-log.js";
import { secretFingerprint } from "../vault/key-material.js";
import type { Vault } from "../vault/vault.js";
import {
  validateWebhookFields,
  WebhookFieldError,
  type WebhookFields,
  type WebhookRuleOptions,
} from "./webhook-rules.js";

export interface WebhookRecord {
  id: string;
  name: string;
  url: string;
  event_types: string[];
  secret_enc: string;
  secret_fingerprint: string;
  enabled: boolean;
  description: string;
  /** The rotated-out secret's ciphertext, signed with too until previous_secret_expires_at. */
  previous_secret_enc: string | null;
  previous_secret_expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface WebhookAttemptRecord {
  attempt: number;
  status_code: number;
  error: string;
  duration_ms: number;
  attempted_at: Date;
}

export interface WebhookDeliveryRecord {
  id: string;
  webhook_id: string;
  event_type: string;
  body: string;
  status: "pending" | "delivered" | "failed";
  attempts: number;
  next_attempt_at: Date;
  last_error: string;
  created_at: Date;
  delivered_at: Date | null;
  attempt_log: WebhookAttemptRecord[];
}

export interface DeliveryQuery {
  status?: string;
  limit?: number;
  offset?: number;
}

export const DELIVERY_DEFAULT_LIMIT = 50;
export const DELIVERY_MAX_LIMIT = 500;
const DELIVERY_STATUSES = ["pending", "delivered", "failed"];

export interface WebhookStoreOptions extends WebhookRuleOptions {
  sql: Sql;
  vault: Vault;
}

export interface WebhookStore {
  /** `secret` is set only when the broker generated it: the one time it is ever returned. */
  create(
    fields: WebhookFields,
    caller: CallerContext,
  ): Promise<{ webhook: WebhookRecord; secret?: string }>;
  list(): Promise<WebhookRecord[]>;
  get(id: string): Promise<WebhookRecord>;
  /** Merges the fields that are set; a new secret replaces the stored one. */
  update(id: string, fields: WebhookFields, caller: CallerContext): Promise<WebhookRecord>;
  /** Deletes the subscription and its outbox rows, delivered or not. */
  remove(id: string, caller: CallerContext): Promise<void>;
  /**
   * Replaces the secret with a generated one, returned here only; the previous one stays valid
   * for `overlapSeconds` (0 revokes it at once).
   */
  rotateSecret(
    id: string,
    overlapSeconds: number | undefined,
    caller: CallerContext,
  ): Promise<{ webhook: WebhookRecord; secret: string }>;
  /** Newest first, each with its attempts. */
  deliveries(id: string, query: DeliveryQuery): Promise<WebhookDeliveryRecord[]>;
  /** A failed delivery back to pending, due now, with a fresh retry window and the same id. */
  redeliver(id: string, deliveryId: string, caller: CallerContext): Promise<WebhookDeliveryRecord>;
}

/** How long a rotated-out secret stays valid unless the rotation asks for less. */
export const SECRET_OVERLAP_DEFAULT_SECONDS = 86_400;

/** The additional data binding a sealed secret to its subscription row. */
export const webhookSecretAad = (id: string) => `webhook:${id}`;

/** The HMAC key of a subscription, opened from its row. */
export function openWebhookKey(vault: Vault, id: string, secretEnc: string): Buffer {
  const key = webhookSecretKey(vault.open(secretEnc, webhookSecretAad(id)));
  if (!key) throw new Error(`webhook ${id} has a malformed secret`);
  return key;
}

export const webhookNotFound = (id: string) =>
  new AtriumError(Code.NotFound, `webhook ${id} not found`);

const deliveryNotFound = (id: string, deliveryId: string) =>
  new AtriumError(Code.NotFound, `delivery ${deliveryId} of webhook ${id} not found`);

/** Deliveries with their attempt log; `$1` is the webhook id, `$2` a status or null. */
const DELIVERY_SELECT = `
  SELECT d.id, d.webhook_id, d.event_type, d.body, d.status, d.attempts, d.next_attempt_at,
         d.last_error, d.created_at, d.delivered_at,
         COALESCE((SELECT jsonb_agg(jsonb_build_object(
                     'attempt', a.attempt, 'status_code', a.status_code, 'error', a.error,
                     'duration_ms', a.duration_ms, 'attempted_at', a.attempted_at)
                   ORDER BY a.attempt)
                     FROM broker_webhook_attempts a WHERE a.delivery_id = d.id),
                  '[]'::jsonb) AS attempt_log
    FROM broker_webhook_deliveries d
   WHERE d.webhook_id = $1 AND ($2::text IS NULL OR d.status = $2)`;

/** jsonb gives attempt times as text. */
function withAttemptDates(rows: WebhookDeliveryRecord[]): WebhookDeliveryRecord[] {
  for (const row of rows) {
    for (const attempt of row.attempt_log) {
      attempt.attempted_at = new Date(attempt.attempted_at as unknown as string);
    }
  }
  return rows;
}

const alreadyExists = (name: string | undefined) =>
  new AtriumError(Code.AlreadyExists, `a webhook named "${name}" already exists`);

/** What the audit log may say about a write: never the secret. */
function auditedFields(fields: WebhookFields): Record<string, unknown> {
  const { secret, ...rest } = fields;
  return { ...rest, secret_rotated: Boolean(secret) };
}

export function createWebhookStore(options: WebhookStoreOptions): WebhookStore {
  const { sql, vault } = options;

  async function fetch(id: string): Promise<WebhookRecord> {
    const { rows } = await sql.query<WebhookRecord>("SELECT * FROM broker_webhooks WHERE id = $1", [
      id,
    ]);
    if (!rows[0]) throw webhookNotFound(id);
    return rows[0];
  }

  /** The rules' finding as the API's 400, naming the field. */
  function checkFields(fields: WebhookFields, complete: boolean): void {
    try {
      validateWebhookFields(fields, options, complete);
    } catch (error) {
      if (error instanceof WebhookFieldError) throw invalidArgument(error.message);
      throw error;
    }
  }

  return {
    async create(fields, caller) {
      checkFields(fields, true);
      const id = randomUUID();
      const generated = fields.secret ? undefined : generateWebhookSecret();
      const secret = fields.secret || (generated as string);
      try {
        const webhook = await sql.transaction(async (tx) => {
          const { rows } = await tx.query<WebhookRecord>(
            `INSERT INTO broker_webhooks (id, name, url, event_types, secret_enc, secret_fingerprint,
               enabled, description)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
            [
              id,
              fields.name,
              fields.url,
              [...new Set(fields.event_types)],
              vault.seal(secret, webhookSecretAad(id)),
              secretFingerprint(secret),
              fields.enabled ?? true,
              fields.description ?? "",
            ],
          );
          await writeAuditEvent(tx, {
            eventType: "webhook.created",
            resourceId: id,
            caller,
            data: { webhook_id: id, ...auditedFields(fields) },
          });
          return rows[0];
        });
        return { webhook, secret: generated };
      } catch (error) {
        if (isUniqueViolation(error)) throw alreadyExists(fields.name);
        throw error;
      }
    },

    async list() {
      const { rows } = await sql.query<WebhookRecord>(
        "SELECT * FROM broker_webhooks ORDER BY name",
      );
      return rows;
    },

    get: fetch,

    async update(id, fields, caller) {
      checkFields(fields, false);
      const current = await fetch(id);
      const secret = fields.secret || undefined;
      try {
        return await sql.transaction(async (tx) => {
          const { rows } = await tx.query<WebhookRecord>(
            `UPDATE broker_webhooks
                SET name = $2, url = $3, event_types = $4, enabled = $5, description = $6,
                    secret_enc = COALESCE($7, secret_enc),
                    previous_secret_enc = CASE WHEN $7 IS NULL THEN previous_secret_enc END,
                    previous_secret_expires_at =
                      CASE WHEN $7 IS NULL THEN previous_secret_expires_at END,
                    secret_fingerprint = COALESCE($8, secret_fingerprint), updated_at = now()
              WHERE id = $1 RETURNING *`,
            [
              id,
              fields.name ?? current.name,
              fields.url ?? current.url,
              fields.event_types ? [...new Set(fields.event_types)] : current.event_types,
              fields.enabled ?? current.enabled,
              fields.description ?? current.description,
              secret ? vault.seal(secret, webhookSecretAad(id)) : null,
              secret ? secretFingerprint(secret) : null,
            ],
          );
          if (!rows[0]) throw webhookNotFound(id);
          await writeAuditEvent(tx, {
            eventType: "webhook.updated",
            resourceId: id,
            caller,
            data: { webhook_id: id, changes: auditedFields(fields) },
          });
          return rows[0];
        });
      } catch (error) {
        if (isUniqueViolation(error)) throw alreadyExists(fields.name);
        throw error;
      }
    },

    async remove(id, caller) {
      await sql.transaction(async (tx) => {
        const { rows } = await tx.query<{ name: string }>(
          "DELETE FROM broker_webhooks WHERE id = $1 RETURNING name",
          [id],
        );
        if (!rows[0]) throw webhookNotFound(id);
        await writeAuditEvent(tx, {
          eventType: "webhook.deleted",
          resourceId: id,
          caller,
          data: { webhook_id: id, name: rows[0].name },
        });
      });
    },

    async deliveries(id, query) {
      const limit = query.limit ?? DELIVERY_DEFAULT_LIMIT;
      const offset = query.offset ?? 0;
      if (!Number.isInteger(limit) || limit < 1 || limit > DELIVERY_MAX_LIMIT) {
        throw invalidArgument(`limit must be between 1 and ${DELIVERY_MAX_LIMIT}`);
      }
      if (!Number.isInteger(offset) || offset < 0)
        throw invalidArgument("offset must be 0 or more");
      if (query.status && !DELIVERY_STATUSES.includes(query.status)) {
        throw invalidArgument(`status must be one of ${DELIVERY_STATUSES.join(", ")}`);
      }
      await fetch(id);
      const { rows } = await sql.query<WebhookDeliveryRecord>(
        `${DELIVERY_SELECT}
          ORDER BY d.created_at DESC, d.id DESC
          LIMIT ${limit} OFFSET ${offset}`,
        [id, query.status || null],
      );
      return withAttemptDates(rows);
    },

    async rotateSecret(id, overlapSeconds, caller) {
      const overlap = overlapSeconds ?? SECRET_OVERLAP_DEFAULT_SECONDS;
      if (!Number.isInteger(overlap) || overlap < 0 || overlap > SECRET_OVERLAP_DEFAULT_SECONDS) {
        throw invalidArgument(
          `overlap_seconds must be between 0 and ${SECRET_OVERLAP_DEFAULT_SECONDS}`,
        );
      }
      const secret = generateWebhookSecret();
      const webhook = await sql.transaction(async (tx) => {
        const { rows } = await tx.query<WebhookRecord>(
          `UPDATE broker_webhooks
              SET previous_secret_enc = CASE WHEN $4 > 0 THEN secret_enc END,
                  previous_secret_expires_at =
                    CASE WHEN $4 > 0 THEN now() + make_interval(secs => $4) END,
                  secret_enc = $2, secret_fingerprint = $3, updated_at = now()
            WHERE id = $1 RETURNING *`,
          [id, vault.seal(secret, webhookSecretAad(id)), secretFingerprint(secret), overlap],
        );
        if (!rows[0]) throw webhookNotFound(id);
        await writeAuditEvent(tx, {
          eventType: "webhook.secret_rotated",
          resourceId: id,
          caller,
          data: {
            webhook_id: id,
            secret_fingerprint: rows[0].secret_fingerprint,
            overlap_seconds: overlap,
          },
        });
        return rows[0];
      });
      return { webhook, secret };
    },

    async redeliver(id, deliveryId, caller) {
      return sql.transaction(async (tx) => {
        const { rows: found } = await tx.query<{ status: string }>(
          `SELECT status FROM broker_webhook_deliveries WHERE id = $1 AND webhook_id = $2
             FOR UPDATE`,
          [deliveryId, id],
        );
        if (!found[0]) throw deliveryNotFound(id, deliveryId);
        if (found[0].status !== "failed") {
          throw new AtriumError(
            Code.FailedPrecondition,
            `delivery ${deliveryId} is ${found[0].status}; only a failed delivery is redelivered`,
          );
        }
        await tx.query(
          `UPDATE broker_webhook_deliveries
              SET status = 'pending', next_attempt_at = now(), redelivered_at = now(),
                  lease_owner = NULL, lease_until = NULL
            WHERE id = $1`,
          [deliveryId],
        );
        await writeAuditEvent(tx, {
          eventType: "webhook.redelivered",
          resourceId: id,
          caller,
          data: { webhook_id: id, delivery_id: deliveryId },
        });
        const { rows } = await tx.query<WebhookDeliveryRecord>(`${DELIVERY_SELECT} AND d.id = $3`, [
          id,
          null,
          deliveryId,
        ]);
        return withAttemptDates(rows)[0];
      });
    },
  };
}
