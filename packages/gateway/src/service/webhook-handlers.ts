import { brokerV1, gatewayV1 } from "@atrium/api";
import { AtriumError, Code } from "@atrium/kit";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { BrokerClient } from "../broker/broker-client.js";
import { bridge } from "./message-bridge.js";

type CallOptions = (context: HandlerContext) => { signal: AbortSignal; headers: Headers };

type WebhookMethods = Pick<
  ServiceImpl<typeof gatewayV1.GatewayService>,
  | "createWebhook"
  | "listWebhooks"
  | "getWebhook"
  | "updateWebhook"
  | "deleteWebhook"
  | "listWebhookDeliveries"
  | "rotateWebhookSecret"
  | "redeliverWebhook"
>;

/**
 * Webhook subscriptions, passed through to the broker. A subscription receives every connection
 * event of the deployment, so an open gateway (no inbound keys) refuses to manage them.
 */
export function createWebhookHandlers(
  broker: BrokerClient,
  brokerCall: CallOptions,
  inboundKeysRequired: boolean,
): WebhookMethods {
  const allowed = () => {
    if (!inboundKeysRequired) {
      throw new AtriumError(
        Code.FailedPrecondition,
        "webhooks are managed only through a gateway that requires API keys (GATEWAY_REQUIRE_API_KEY=true)",
      );
    }
  };
  const webhook = (message: brokerV1.Webhook) =>
    bridge(brokerV1.WebhookSchema, message, gatewayV1.WebhookSchema);
  const input = (message: gatewayV1.WebhookInput | undefined) =>
    message && bridge(gatewayV1.WebhookInputSchema, message, brokerV1.WebhookInputSchema);

  return {
    async createWebhook(request, context) {
      allowed();
      return webhook(
        await broker.createWebhook({ webhook: input(request.webhook) }, brokerCall(context)),
      );
    },
    async listWebhooks(_request, context) {
      allowed();
      const result = await broker.listWebhooks({}, brokerCall(context));
      return { webhooks: result.webhooks.map(webhook) };
    },
    async getWebhook(request, context) {
      allowed();
      return webhook(await broker.getWebhook({ id: request.id }, brokerCall(context)));
    },
    async updateWebhook(request, context) {
      allowed();
      return webhook(
        await broker.updateWebhook(
          { id: request.id, webhook: input(request.webhook) },
          brokerCall(context),
        ),
      );
    },
    async deleteWebhook(request, context) {
      allowed();
      const result = await broker.deleteWebhook({ id: request.id }, brokerCall(context));
      return bridge(
        brokerV1.DeleteWebhookResponseSchema,
        result,
        gatewayV1.DeleteWebhookResponseSchema,
      );
    },
    async listWebhookDeliveries(request, context) {
      allowed();
      const result = await broker.listWebhookDeliveries(
        { id: request.id, status: request.status, limit: request.limit, offset: request.offset },
        brokerCall(context),
      );
      return bridge(
        brokerV1.ListWebhookDeliveriesResponseSchema,
        result,
        gatewayV1.ListWebhookDeliveriesResponseSchema,
      );
    },
    async rotateWebhookSecret(request, context) {
      allowed();
      return webhook(
        await broker.rotateWebhookSecret(
          { id: request.id, overlapSeconds: request.overlapSeconds },
          brokerCall(context),
        ),
      );
    },
    async redeliverWebhook(request, context) {
      allowed();
      const result = await broker.redeliverWebhook(
        { id: request.id, deliveryId: request.deliveryId },
        brokerCall(context),
      );
      return bridge(brokerV1.WebhookDeliverySchema, result, gatewayV1.WebhookDeliverySchema);
    },
  };
}
