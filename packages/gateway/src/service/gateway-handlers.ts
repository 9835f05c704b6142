import { brokerV1, gatewayV1 } from "@atrium/api";
import {
  AtriumError,
  Code,
  hasControlCharacter,
  isAllowedReturnUrl,
  restProtocolName,
} from "@atrium/kit";
import type { ServiceImpl } from "@connectrpc/connect";
import type { BrokerClient } from "../broker/broker-client.js";
import { brokerCall, relays } from "./broker-relay.js";
import { bridgeOf } from "./message-bridge.js";
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

export type GatewayHandlers = ServiceImpl<typeof gatewayV1.GatewayService>;

/**
 * Methods whose request and answer are the broker's, field for field: relayed as they are.
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
  const token = bridgeOf(brokerV1.TokenResponseSchema, gatewayV1.TokenSchema);
  const refreshResult = bridgeOf(
    brokerV1.RefreshConnectionResponseSchema,
    gatewayV1.RefreshResultSchema,
  );
  const started = bridgeOf(
    brokerV1.StartOAuthResponseSchema,
    gatewayV1.StartConnectionResponseSchema,
  );
  const callback = bridgeOf(
    gatewayV1.CompleteAuthorizationRequestSchema,
    brokerV1.CompleteOAuthRequestSchema,
  );
  const connection = bridgeOf(brokerV1.ConnectionSummarySchema, gatewayV1.ConnectionSchema);
  const captureSchema = bridgeOf(brokerV1.CaptureSchemaSchema, gatewayV1.CaptureSchemaSchema);
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
    ...relays(broker, gatewayV1.GatewayService, relayed),
    async getToken(request, context) {
      // One broker call: the strategy comes with the token.
      return token(
        await broker.getConnectionToken(
          { id: request.connectionId, workspaceId: request.workspaceId },
          brokerCall(context),
        ),
      );
    },
    async refreshConnection(request, context) {
      return refreshResult(
        await broker.refreshConnection(
          { id: request.connectionId, workspaceId: request.workspaceId },
          brokerCall(context),
        ),
      );
    },
    async startConnection(request, context) {
      checkReturnUrl(request.returnUrl);
      return started(
        await broker.startOAuth(
          {
            providerId: request.providerId,
            workspaceId: request.workspaceId,
            returnUrl: request.returnUrl,
            scopes: request.scopes,
            redirectUri: options.publicUrl ? `${options.publicUrl}/auth/callback` : "",
          },
          brokerCall(context),
        ),
      );
    },
    async completeAuthorization(request, context) {
      const completed = await broker.completeOAuth(callback(request), brokerCall(context));
      const { returnUrl } = completed;
      const summary = completed.connection;
      checkReturnUrl(returnUrl);
      if (returnUrl && context.protocolName === restProtocolName && summary) {
        // The REST layer turns this into 303 See Other for the browser.
        const target = new URL(returnUrl);
        target.searchParams.set("connection_id", summary.id);
        target.searchParams.set("status", summary.status);
        context.responseHeader.set("location", target.toString());
      }
      return { connection: summary ? connection(summary) : undefined, returnUrl };
    },
    async getCaptureSchema(request, context) {
      if (!request.providerId)
        throw new AtriumError(Code.InvalidArgument, "provider_id is required");
      return captureSchema(
        await broker.getCaptureSchema({ id: request.providerId }, brokerCall(context)),
      );
    },
    ...createWebhookHandlers(broker, options.inboundKeysRequired),
  };
}
