import {
  createOutboxDrain,
  type Logger,
  type OutboxAttempt,
  type OutboxDrain,
  retryDelayMs,
  type Sql,
  signWebhook,
} from "@atrium/kit";
import type { WebhookSettings } from "../config/broker-config.js";
import type { Vault } from "../vault/vault.js";
import { createAddressVetter } from "./webhook-address.js";
import { postWebhook } from "./webhook-request.js";
import { openWebhookKey } from "./webhook-store.js";

export interface WebhookWorkerOptions {
  sql: Sql;
  vault: Vault;
  logger: Logger;
  /** Lease owner id of this instance. */
  instanceId: string;
  settings: Pick<
    WebhookSettings,
    | "pollMs"
    | "timeoutMs"
    | "retryBaseMs"
    | "retryWindowSeconds"
    | "batchSize"
    | "allowHttpLoopback"
  >;
}

/** One pass claims due deliveries until none is left and sends them (kit's outbox drain). */
export type WebhookWorker = OutboxDrain;

interface ClaimedDelivery {
  id: string;
  webhook_id: string;
  body: string;
  attempts: number;
  url: string;
  secret_enc: string;
  /** Set while a rotated-out secret is still valid. */
  previous_secret_enc: string | null;
}

/** Why an attempt failed, in words that name neither the URL nor the secret. */
function failureText(error: unknown, timedOut: boolean, timeoutMs: number): string {
  if (timedOut) return `timed out after ${timeoutMs} ms`;
  return (error as { code?: string }).code ?? (error as Error).message ?? "request failed";
}

/** The promise, or the signal's reason once it aborts first (a DNS lookup cannot be cut). */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/**
 * Delivers the outbox. A claim takes a lease on due rows with `FOR UPDATE SKIP LOCKED` in one
 * statement, so instances sharing the database never send the same delivery at once; a row whose
 * instance died is taken over once its lease runs out. Rows are deleted never, updated only
 * after an attempt: at-least-once across restarts.
 */
export function createWebhookWorker(options: WebhookWorkerOptions): WebhookWorker {
  const { sql, settings, logger } = options;
  // Longer than any attempt, so a live instance never loses a lease it still uses.
  const leaseSeconds = Math.ceil(settings.timeoutMs / 1000) * 2 + 30;
  const vetAddresses = createAddressVetter({ allowLoopback: settings.allowHttpLoopback });

  async function claim(limit: number): Promise<ClaimedDelivery[]> {
    const { rows } = await sql.query<ClaimedDelivery>(
      `WITH due AS (
         SELECT d.id FROM broker_webhook_deliveries d
           JOIN broker_webhooks w ON w.id = d.webhook_id
          WHERE d.status = 'pending' AND d.next_attempt_at <= now() AND w.enabled
            AND (d.lease_until IS NULL OR d.lease_until < now())
          ORDER BY d.next_attempt_at
          LIMIT $3
          FOR UPDATE OF d SKIP LOCKED)
       UPDATE broker_webhook_deliveries d
          SET lease_owner = $1, lease_until = now() + make_interval(secs => $2)
         FROM due, broker_webhooks w
        WHERE d.id = due.id AND w.id = d.webhook_id
       RETURNING d.id, d.webhook_id, d.body, d.attempts, w.url, w.secret_enc,
                 CASE WHEN w.previous_secret_expires_at > now() THEN w.previous_secret_enc END
                   AS previous_secret_enc`,
      [options.instanceId, leaseSeconds, limit],
    );
    return rows;
  }

  async function release(id: string): Promise<void> {
    await sql.query(
      `UPDATE broker_webhook_deliveries SET lease_owner = NULL, lease_until = NULL
        WHERE id = $1 AND lease_owner = $2`,
      [id, options.instanceId],
    );
  }

  /** Records one attempt and what follows from it; nothing when the lease was lost meanwhile. */
  async function record(
    delivery: ClaimedDelivery,
    outcome: { ok: boolean; statusCode: number; error: string; durationMs: number; at: Date },
  ): Promise<"delivered" | "retrying" | "failed" | "lost"> {
    const attempt = delivery.attempts + 1;
    const delaySeconds = retryDelayMs(attempt, settings.retryBaseMs) / 1000;
    return sql.transaction(async (tx) => {
      const { rows } = await tx.query<{ status: "delivered" | "pending" | "failed" }>(
        `UPDATE broker_webhook_deliveries
            SET attempts = $3, last_error = $4, lease_owner = NULL, lease_until = NULL,
                status = CASE
                  WHEN $5 THEN 'delivered'
                  WHEN now() + make_interval(secs => $6)
                       > COALESCE(redelivered_at, created_at) + make_interval(secs => $7)
                    THEN 'failed'
                  ELSE 'pending' END,
                delivered_at = CASE WHEN $5 THEN now() END,
                next_attempt_at = now() + make_interval(secs => $6)
          WHERE id = $1 AND lease_owner = $2 AND status = 'pending'
          RETURNING status`,
        [
          delivery.id,
          options.instanceId,
          attempt,
          outcome.error,
          outcome.ok,
          delaySeconds,
          settings.retryWindowSeconds,
        ],
      );
      if (!rows[0]) return "lost";
      await tx.query(
        `INSERT INTO broker_webhook_attempts
           (delivery_id, attempt, status_code, error, duration_ms, attempted_at)
         VALUES ($1, $2, $3, $4, $5, $6)`,
        [delivery.id, attempt, outcome.statusCode, outcome.error, outcome.durationMs, outcome.at],
      );
      return rows[0].status === "pending" ? "retrying" : rows[0].status;
    });
  }

  async function send(delivery: ClaimedDelivery, stop: AbortSignal): Promise<OutboxAttempt> {
    let keys: Buffer[];
    try {
      keys = [openWebhookKey(options.vault, delivery.webhook_id, delivery.secret_enc)];
    } catch (error) {
      // Counted as a failed attempt so the row is retried (a key may come back) and then failed.
      logger.error(
        { webhookId: delivery.webhook_id, err: error },
        "webhook secret cannot be opened",
      );
      return tally(delivery, {
        ok: false,
        statusCode: 0,
        error: "secret cannot be opened",
        durationMs: 0,
        at: new Date(),
      });
    }
    if (delivery.previous_secret_enc) {
      try {
        keys.push(openWebhookKey(options.vault, delivery.webhook_id, delivery.previous_secret_enc));
      } catch (error) {
        // The current secret still signs: receivers already on it verify.
        logger.error(
          { webhookId: delivery.webhook_id, err: error },
          "rotated-out webhook secret cannot be opened; signing with the current one only",
        );
      }
    }
    const timestamp = Math.floor(Date.now() / 1000);
    const at = new Date();
    const started = performance.now();
    const timeout = AbortSignal.timeout(settings.timeoutMs);
    let statusCode = 0;
    let error = "";
    try {
      const signal = AbortSignal.any([timeout, stop]);
      const host = new URL(delivery.url).hostname;
      const addresses = await abortable(vetAddresses(host), signal);
      statusCode = await postWebhook({
        url: delivery.url,
        headers: {
          "content-type": "application/json",
          "user-agent": "atrium-broker-webhooks",
          "webhook-id": delivery.id,
          "webhook-timestamp": String(timestamp),
          // During a rotation's overlap one signature per secret, space-separated (Standard
          // Webhooks), so receivers still on the previous secret verify too.
          "webhook-signature": keys
            .map((key) => signWebhook(key, delivery.id, timestamp, delivery.body))
            .join(" "),
        },
        body: delivery.body,
        addresses,
        signal,
      });
      if (statusCode < 200 || statusCode >= 300) {
        error =
          statusCode >= 300 && statusCode < 400
            ? `redirect ${statusCode} not followed`
            : `HTTP ${statusCode}`;
      }
    } catch (failure) {
      if (stop.aborted) {
        await release(delivery.id);
        return "lost";
      }
      error = failureText(failure, timeout.aborted, settings.timeoutMs);
    }
    return tally(delivery, {
      ok: error === "",
      statusCode,
      error,
      durationMs: Math.round(performance.now() - started),
      at,
    });
  }

  async function tally(
    delivery: ClaimedDelivery,
    outcome: Parameters<typeof record>[1],
  ): Promise<OutboxAttempt> {
    const status = await record(delivery, outcome);
    if (status !== "delivered" && status !== "lost") {
      logger.warn(
        { deliveryId: delivery.id, webhookId: delivery.webhook_id, error: outcome.error, status },
        "webhook delivery attempt failed",
      );
    }
    return status;
  }

  // Requests in flight are cut by stop(), and their rows released without counting an attempt.
  return createOutboxDrain({
    claim,
    deliver: send,
    batchSize: settings.batchSize,
    pollMs: settings.pollMs,
    onError: (error) => logger.error({ err: error }, "webhook delivery pass failed"),
  });
}
