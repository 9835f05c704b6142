import { brokerV1, gatewayV1 } from "@atrium/api";
import {
  AtriumError,
  Code,
  callerAddressKey,
  hasControlCharacter,
  isAllowedReturnUrl,
  restProtocolName,
} from "@atrium/kit";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { BrokerClient } from "../broker/broker-client.js";
import { bridge } from "./message-bridge.js";
import { tokenFromBroker } from "./token-message.js";
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
 * What the broker should record about the caller, on whichever transport reaches it (REST header
 * or gRPC metadata). The address is the one the host resolved, never the caller's own
 * X-Forwarded-For; the broker believes it only when the gateway is one of its TRUSTED_PROXIES.
 */
function brokerCall(context: HandlerContext) {
  const headers = new Headers();
  const ip = context.values.get(callerAddressKey);
  if (ip) headers.set("x-forwarded-for", ip);
  const userAgent = context.requestHeader.get("user-agent");
  if (userAgent) headers.set("user-agent", userAgent);
  return { signal: context.signal, headers };
}

export function createGatewayHandlers(options: GatewayHandlersOptions): GatewayHandlers {
  const { broker } = options;
  const connection = (summary: brokerV1.ConnectionSummary) =>
    bridge(brokerV1.ConnectionSummarySchema, summary, gatewayV1.ConnectionSchema);
  const agent = (message: brokerV1.Agent) =>
    bridge(brokerV1.AgentSchema, message, gatewayV1.AgentSchema);
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
    async getToken(request, context) {
      // One broker call: the strategy comes with the token.
      const token = await broker.getConnectionToken(
        { id: request.connectionId, workspaceId: request.workspaceId },
        brokerCall(context),
      );
      return tokenFromBroker(token);
    },
    async refreshConnection(request, context) {
      const result = await broker.refreshConnection(
        { id: request.connectionId, workspaceId: request.workspaceId },
        brokerCall(context),
      );
      return bridge(
        brokerV1.RefreshConnectionResponseSchema,
        result,
        gatewayV1.RefreshResultSchema,
      );
    },
    async listConnections(request, context) {
      const result = await broker.listConnections(
        { workspaceId: request.workspaceId },
        brokerCall(context),
      );
      return { connections: result.connections.map(connection) };
    },
    async getConnection(request, context) {
      return connection(
        await broker.getConnection(
          { id: request.id, workspaceId: request.workspaceId },
          brokerCall(context),
        ),
      );
    },
    async revokeConnection(request, context) {
      const result = await broker.revokeConnection(
        { id: request.id, workspaceId: request.workspaceId, reason: request.reason },
        brokerCall(context),
      );
      return bridge(brokerV1.RevocationResultSchema, result, gatewayV1.RevocationResultSchema);
    },
    async startConnection(request, context) {
      checkReturnUrl(request.returnUrl);
      const started = await broker.startOAuth(
        {
          providerId: request.providerId,
          workspaceId: request.workspaceId,
          returnUrl: request.returnUrl,
          scopes: request.scopes,
          redirectUri: options.publicUrl ? `${options.publicUrl}/auth/callback` : "",
        },
        brokerCall(context),
      );
      return bridge(
        brokerV1.StartOAuthResponseSchema,
        started,
        gatewayV1.StartConnectionResponseSchema,
      );
    },
    async completeAuthorization(request, context) {
      const completed = await broker.completeOAuth(
        {
          code: request.code,
          state: request.state,
          iss: request.iss,
          error: request.error,
          errorDescription: request.errorDescription,
        },
        brokerCall(context),
      );
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
      const schema = await broker.getCaptureSchema({ id: request.providerId }, brokerCall(context));
      return bridge(brokerV1.CaptureSchemaSchema, schema, gatewayV1.CaptureSchemaSchema);
    },
    async captureCredential(request, context) {
      const summary = await broker.captureCredential(
        {
          providerId: request.providerId,
          workspaceId: request.workspaceId,
          apiKey: request.apiKey,
          username: request.username,
          password: request.password,
        },
        brokerCall(context),
      );
      return connection(summary);
    },
    async createAgent(request, context) {
      const created = await broker.createAgent(
        {
          workspaceId: request.workspaceId,
          name: request.name,
          description: request.description,
          metadata: request.metadata,
        },
        brokerCall(context),
      );
      return agent(created);
    },
    async listAgents(request, context) {
      const result = await broker.listAgents(
        { workspaceId: request.workspaceId },
        brokerCall(context),
      );
      return { agents: result.agents.map(agent) };
    },
    async getAgent(request, context) {
      return agent(
        await broker.getAgent(
          { id: request.id, workspaceId: request.workspaceId },
          brokerCall(context),
        ),
      );
    },
    async disableAgent(request, context) {
      // The broker closes the agent's open sessions in the same transaction.
      return agent(
        await broker.disableAgent(
          { id: request.id, workspaceId: request.workspaceId },
          brokerCall(context),
        ),
      );
    },
    async createAgentSession(request, context) {
      const session = await broker.createAgentSession(
        {
          agentId: request.agentId,
          connectionId: request.connectionId,
          workspaceId: request.workspaceId,
        },
        brokerCall(context),
      );
      return bridge(brokerV1.AgentSessionSchema, session, gatewayV1.AgentSessionSchema);
    },
    async getAgentSession(request, context) {
      const session = await broker.getAgentSession({ id: request.id }, brokerCall(context));
      return bridge(brokerV1.AgentSessionSchema, session, gatewayV1.AgentSessionSchema);
    },
    ...createWebhookHandlers(broker, brokerCall, options.inboundKeysRequired),
  };
}
