import {
  AtriumError,
  Code,
  hasControlCharacter,
  isAllowedReturnUrl,
  restProtocolName,
} from "@atrium/kit";
import type { BrokerClient } from "../broker/broker-client.js";
import { brokerCall, type GatewayHandlers, relays } from "./broker-relay.js";
import { createWebhookHandlers } from "./webhook-handlers.js";

export interface GatewayHandlersOptions {
  broker: BrokerClient;
  /** Empty: the broker's own list decides. */
  allowedReturnDomains: string[];
  /** Public base of this gateway; the OAuth redirect URI is its /auth/callback. */
  publicUrl: string | undefined;
  /** GATEWAY_REQUIRE_API_KEY: webhook subscriptions are managed only when it is on. */
  inboundKeysRequired: boolean;
}

export type { GatewayHandlers } from "./broker-relay.js";

/**
 * Methods that declare the broker's request and answer: relayed as they are.
 * Revoking keeps the broker's semantics (idempotent, 404 on another workspace, sessions closed),
 * and disabling an agent closes its open sessions in the broker's transaction.
 */
const relayed = [
  "listConnections",
  "getConnection",
  "revokeConnection",
  "captureCredential",
  "createAgent",
  "listAgents",
  "getAgent",
  "disableAgent",
  "createAgentSession",
  "getAgentSession",
] as const;

export function createGatewayHandlers(options: GatewayHandlersOptions): GatewayHandlers {
  const { broker } = options;
  const checkReturnUrl = (returnUrl: string) => {
    if (hasControlCharacter(returnUrl)) {
      throw new AtriumError(Code.InvalidArgument, "return_url must not contain control characters");
    }
    if (
      returnUrl &&
      options.allowedReturnDomains.length > 0 &&
      !isAllowedReturnUrl(returnUrl, options.allowedReturnDomains)
    ) {
      throw new AtriumError(Code.InvalidArgument, "return_url is not on an allowed return domain");
    }
  };

  return {
    ...relays(broker, relayed),
    // The four requests of the gateway's own: the public API names the connection or provider
    // where the broker's request says id, and the redirect URI is this gateway's.
    getToken(request, context) {
      // One broker call: the strategy comes with the token.
      return broker.getConnectionToken(
        { id: request.connectionId, workspaceId: request.workspaceId },
        brokerCall(context),
      );
    },
    refreshConnection(request, context) {
      return broker.refreshConnection(
        { id: request.connectionId, workspaceId: request.workspaceId },
        brokerCall(context),
      );
    },
    startConnection(request, context) {
      checkReturnUrl(request.returnUrl);
      return broker.startOAuth(
        {
          providerId: request.providerId,
          workspaceId: request.workspaceId,
          returnUrl: request.returnUrl,
          scopes: request.scopes,
          redirectUri: options.publicUrl ? `${options.publicUrl}/auth/callback` : "",
        },
        brokerCall(context),
      );
    },
    async completeAuthorization(request, context) {
      const completed = await broker.completeOAuth(request, brokerCall(context));
      const { returnUrl, connection } = completed;
      checkReturnUrl(returnUrl);
      if (returnUrl && context.protocolName === restProtocolName && connection) {
        // The REST layer turns this into 303 See Other for the browser.
        const target = new URL(returnUrl);
        target.searchParams.set("connection_id", connection.id);
        target.searchParams.set("status", connection.status);
        context.responseHeader.set("location", target.toString());
      }
      return completed;
    },
    getCaptureSchema(request, context) {
      if (!request.providerId)
        throw new AtriumError(Code.InvalidArgument, "provider_id is required");
      return broker.getCaptureSchema({ id: request.providerId }, brokerCall(context));
    },
    ...createWebhookHandlers(broker, options.inboundKeysRequired),
  };
}
