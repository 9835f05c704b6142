import {
  AtriumError,
  attentionRequired,
  Code,
  connectionNotActive,
  connectionRevoked,
} from "@atrium/kit";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { BrokerImpl } from "./scripted-broker.js";

const agent = (id: string, workspaceId: string) => ({
  id,
  workspaceId,
  name: "planner",
  createdAt: timestampFromDate(new Date()),
});

/** Agents "missing" (404) and "disabled" (sessions refused, 412). Connections named by their behaviour: "attention", "revoked", "failed", "missing", "db-down" (503, retry after 1 s), "slow-grpc", "sigv4", anything else is active. */
export function brokerScript(overrides: BrokerImpl = {}): BrokerImpl {
  const failures = (id: string) => {
    if (id === "attention") throw attentionRequired({ connection_id: id });
    if (id === "revoked") throw connectionRevoked({ connection_id: id });
    if (id === "failed") throw connectionNotActive({ connection_id: id, status: "failed" });
    if (id === "missing") throw new AtriumError(Code.NotFound, `connection ${id} not found`);
    if (id === "db-down") {
      throw new AtriumError(Code.Unavailable, "database unavailable", { retryAfterSeconds: 1 });
    }
  };
  return {
    async getConnectionToken(request, context) {
      failures(request.id);
      if (request.id === "slow-grpc" && context.protocolName !== "rest") {
        // Never answers on gRPC: the gateway's deadline has to move the call to REST.
        await new Promise((resolve) => context.signal.addEventListener("abort", resolve));
      }
      return {
        connectionId: request.id,
        authType: request.id === "sigv4" ? "basic_auth" : "oauth2",
        status: "active",
        healthStatus: "healthy",
        accessToken: `access-${request.id}`,
        tokenType: "Bearer",
        expiresAt: timestampFromDate(new Date(Date.now() + 3_600_000)),
        username: request.id === "sigv4" ? "AKID" : "",
        strategy:
          request.id === "sigv4"
            ? { type: "aws_sigv4", region: "eu-west-1", service: "execute-api" }
            : { type: "oauth2" },
      };
    },
    async refreshConnection(request) {
      failures(request.id);
      return { connectionId: request.id, status: "active", healthStatus: "healthy" };
    },
    async getConnection(request) {
      failures(request.id);
      return {
        id: request.id,
        workspaceId: "ws-1",
        providerId: request.id === "sigv4" ? "aws" : "oidc",
        status: "active",
      };
    },
    async listConnections(request) {
      return { connections: [{ id: "c1", workspaceId: request.workspaceId, status: "active" }] };
    },
    async getProvider(request) {
      const params: Record<string, string> =
        request.id === "aws"
          ? {
              credential_strategy: "aws_sigv4",
              aws_region: "eu-west-1",
              aws_service: "execute-api",
            }
          : {};
      return { id: request.id, authType: request.id === "aws" ? "basic_auth" : "oauth2", params };
    },
    async revokeConnection(request) {
      failures(request.id);
      return { connectionId: request.id, tokenDeleted: true, reason: request.reason };
    },
    async getCaptureSchema(request) {
      return {
        providerId: request.id,
        authType: "api_key",
        fields: [{ name: "api_key", secret: true, required: true }],
        validatable: true,
      };
    },
    async completeOAuth(request) {
      return {
        connection: { id: `conn-${request.code}`, workspaceId: "ws-1", status: "active" },
        returnUrl: "https://app.example.com/done?x=1",
      };
    },
    async createAgent(request) {
      if (!request.name)
        throw new AtriumError(Code.InvalidArgument, "invalid agent: name is required");
      return { ...agent("agent-1", request.workspaceId), metadata: request.metadata };
    },
    async listAgents(request) {
      return { agents: [agent("agent-1", request.workspaceId)] };
    },
    async getAgent(request) {
      if (request.id === "missing")
        throw new AtriumError(Code.NotFound, `agent ${request.id} not found`);
      return agent(request.id, "ws-1");
    },
    async disableAgent(request) {
      return { ...agent(request.id, "ws-1"), disabledAt: timestampFromDate(new Date()) };
    },
    async createAgentSession(request) {
      if (request.agentId === "disabled")
        throw new AtriumError(Code.FailedPrecondition, `agent ${request.agentId} is disabled`);
      return { id: "s-1", agentId: request.agentId, connectionId: request.connectionId };
    },
    ...overrides,
  };
}
