import {
  createOutboxDrain,
  type Logger,
  type OutboxAttempt,
  type OutboxDrain,
  retryDelayMs,
  signWebhook,
} from "@atrium/kit";
import { deadlineSignal } from "@atrium/sdk";
import type { OutboxEntry, WebhookOutbox } from "./webhook-outbox.js";

export interface StepWebhookSettings {
  url: string;
  /** The HMAC key of the `whsec_` secret (kit's webhookSecretKey). */
  key: Buffer;
  pollMs: number;
  timeoutMs: number;
  retryBaseMs: number;
  /** How long after an event was recorded it is still retried. */
  retryWindowMs: number;
}

export interface StepWebhookWorkerOptions {
  outbox: WebhookOutbox;
  settings: StepWebhookSettings;
  /** Lease owner id of this host. */
  instanceId: string;
  logger: Logger;
  batchSize?: number;
}

/** One pass claims due events until none is left and sends them (kit's outbox drain). */
export type StepWebhookWorker = OutboxDrain;

/**
 * Sends the outbox's step events to the chat host's webhook URL, signed as Standard Webhooks
 * (webhook-id, webhook-timestamp, webhook-signature) with kit's signing, as the broker's
 * webhooks are. A 2xx settles an event; anything else is retried with kit's back-off until the
 * retry window closes. The URL is the operator's (CHAT_WEBHOOK_URL), not a caller's, so it is
 * not vetted the way the broker vets subscribers' URLs; redirects are not followed.
 */
export function createStepWebhookWorker(options: StepWebhookWorkerOptions): StepWebhookWorker {
  const { outbox, settings, logger } = options;
  // Longer than any attempt, so a live host never loses a lease it still uses.
  const leaseMs = settings.timeoutMs * 2 + 30_000;
  let sweptAt = 0;

  async function send(entry: OutboxEntry, stop: AbortSignal): Promise<OutboxAttempt> {
    const timestamp = Math.floor(Date.now() / 1000);
    let error = "";
    try {
      const response = await fetch(settings.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "user-agent": "atrium-chat-webhooks",
          "webhook-id": entry.id,
          "webhook-timestamp": String(timestamp),
          "webhook-signature": signWebhook(settings.key, entry.id, timestamp, entry.body),
        },
        body: entry.body,
        redirect: "manual",
        signal: deadlineSignal(settings.timeoutMs, stop),
      });
      await response.body?.cancel();
      if (response.status < 200 || response.status >= 300) error = `HTTP ${response.status}`;
    } catch (failure) {
      if (stop.aborted) {
        await outbox.release(entry.id, options.instanceId);
        return "lost";
      }
      const cause = (failure as { cause?: { code?: string } }).cause;
      error =
        (failure as Error).name === "TimeoutError"
          ? `timed out after ${settings.timeoutMs} ms`
          : (cause?.code ?? (failure as Error).message);
    }
    if (error === "") {
      await outbox.settle(entry.id, options.instanceId, { delivered: true });
      return "delivered";
    }
    const retryAt = new Date(Date.now() + retryDelayMs(entry.attempts + 1, settings.retryBaseMs));
    const open = retryAt.getTime() <= Date.parse(entry.created_at) + settings.retryWindowMs;
    await outbox.settle(entry.id, options.instanceId, {
      delivered: false,
      error,
      ...(open ? { retryAt } : {}),
    });
    logger.warn(
      { webhookId: entry.id, type: entry.type, error, attempt: entry.attempts + 1, gaveUp: !open },
      "chat webhook delivery attempt failed",
    );
    return open ? "retrying" : "failed";
  }

  return createOutboxDrain({
    claim: (limit) => outbox.claim(options.instanceId, leaseMs, limit),
    deliver: send,
    batchSize: options.batchSize ?? 20,
    pollMs: settings.pollMs,
    // Settled events are kept a retry window for inspection, then swept, at most hourly.
    async beforePass() {
      if (!outbox.sweep || Date.now() - sweptAt <= 3600_000) return;
      sweptAt = Date.now();
      await outbox.sweep(Math.ceil(settings.retryWindowMs / 1000));
    },
    onError: (error) => logger.error({ err: error }, "chat webhook delivery pass failed"),
  });
}
