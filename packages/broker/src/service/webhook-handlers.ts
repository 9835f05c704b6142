import type { brokerV1 } from "@atrium/api";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { WebhookFields } from "../webhooks/webhook-rules.js";
import type {
  WebhookDeliveryRecord,
  WebhookRecord,
  WebhookStore,
} from "../webhooks/webhook-store.js";
import { callerFrom, ts } from "./handler-values.js";

function webhookMessage(
  row: WebhookRecord,
  secret = "",
): MessageInitShape<typeof brokerV1.WebhookSchema> {
  return {
    id: row.id,
    name: row.name,
    url: row.url,
    eventTypes: row.event_types,
    enabled: row.enabled,
    description: row.description,
    secretFingerprint: row.secret_fingerprint,
    secret,
    createdAt: ts(row.created_at),
    updatedAt: ts(row.updated_at),
    previousSecretExpiresAt:
      row.previous_secret_expires_at && row.previous_secret_expires_at > new Date()
        ? ts(row.previous_secret_expires_at)
        : undefined,
  };
}

function deliveryMessage(
  row: WebhookDeliveryRecord,
): MessageInitShape<typeof brokerV1.WebhookDeliverySchema> {
  return {
    id: row.id,
    webhookId: row.webhook_id,
    eventType: row.event_type,
    status: row.status,
    attemptCount: row.attempts,
    nextAttemptAt: row.status === "pending" ? ts(row.next_attempt_at) : undefined,
    lastError: row.last_error,
    createdAt: ts(row.created_at),
    deliveredAt: ts(row.delivered_at),
    payload: row.body,
    attempts: row.attempt_log.map((a) => ({
      attempt: a.attempt,
      statusCode: a.status_code,
      error: a.error,
      durationMs: a.duration_ms,
      attemptedAt: ts(a.attempted_at),
    })),
  };
}

/** Proto WebhookInput → domain fields; unset optionals and an empty list stay absent. */
function webhookFields(input: brokerV1.WebhookInput | undefined): WebhookFields {
  if (!input) return {};
  return {
    name: input.name,
    url: input.url,
    event_types: input.eventTypes.length > 0 ? input.eventTypes : undefined,
    secret: input.secret,
    enabled: input.enabled,
    description: input.description,
  };
}

export function createWebhookHandlers(
  webhooks: WebhookStore,
): Partial<ServiceImpl<typeof brokerV1.BrokerService>> {
  return {
    async createWebhook(request, context) {
      const created = await webhooks.create(webhookFields(request.webhook), callerFrom(context));
      return webhookMessage(created.webhook, created.secret);
    },
    async listWebhooks() {
      return { webhooks: (await webhooks.list()).map((row) => webhookMessage(row)) };
    },
    async getWebhook(request) {
      return webhookMessage(await webhooks.get(request.id));
    },
    async updateWebhook(request, context) {
      return webhookMessage(
        await webhooks.update(request.id, webhookFields(request.webhook), callerFrom(context)),
      );
    },
    async deleteWebhook(request, context) {
      await webhooks.remove(request.id, callerFrom(context));
      return { id: request.id, deleted: true };
    },
    async listWebhookDeliveries(request) {
      const rows = await webhooks.deliveries(request.id, {
        status: request.status || undefined,
        limit: request.limit,
        offset: request.offset,
      });
      return { deliveries: rows.map(deliveryMessage) };
    },
    async rotateWebhookSecret(request, context) {
      const rotated = await webhooks.rotateSecret(
        request.id,
        request.overlapSeconds,
        callerFrom(context),
      );
      return webhookMessage(rotated.webhook, rotated.secret);
    },
    async redeliverWebhook(request, context) {
      return deliveryMessage(
        await webhooks.redeliver(request.id, request.deliveryId, callerFrom(context)),
      );
    },
  };
}
