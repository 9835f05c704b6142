import { AtriumError, Code } from "@atrium/kit";
import type { BrokerClient } from "../broker/broker-client.js";
import { relays } from "./broker-relay.js";

const webhookMethods = [
  "createWebhook",
  "listWebhooks",
  "getWebhook",
  "updateWebhook",
  "deleteWebhook",
  "listWebhookDeliveries",
  "rotateWebhookSecret",
  "redeliverWebhook",
] as const;

/**
 * Webhook subscriptions, relayed to the broker. A subscription receives every connection event of
 * the deployment, so an open gateway (no inbound keys) refuses to manage them.
 */
export function createWebhookHandlers(broker: BrokerClient, inboundKeysRequired: boolean) {
  const handlers = relays(broker, webhookMethods);
  if (inboundKeysRequired) return handlers;
  const refused = async () => {
    throw new AtriumError(
      Code.FailedPrecondition,
      "webhooks are managed only through a gateway that requires API keys (GATEWAY_REQUIRE_API_KEY=true)",
    );
  };
  return Object.fromEntries(
    webhookMethods.map((name) => [name, refused]),
  ) as unknown as typeof handlers;
}
