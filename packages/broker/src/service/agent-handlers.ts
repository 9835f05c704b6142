import type { brokerV1 } from "@atrium/api";
import { AtriumError, Code } from "@atrium/kit";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { AgentRecord, AgentSessionRecord, AgentStore } from "../agents/agent-store.js";
import type { ConnectionService } from "../connections/connection-service.js";
import { callerFrom, ts } from "./handler-values.js";

type AgentHandlers = Pick<
  ServiceImpl<typeof brokerV1.BrokerService>,
  | "createAgent"
  | "listAgents"
  | "getAgent"
  | "disableAgent"
  | "createAgentSession"
  | "getAgentSession"
>;

function agentMessage(row: AgentRecord): MessageInitShape<typeof brokerV1.AgentSchema> {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    name: row.name,
    description: row.description,
    metadata: row.metadata,
    createdAt: ts(row.created_at),
    disabledAt: ts(row.disabled_at),
  };
}

function sessionMessage(
  row: AgentSessionRecord,
): MessageInitShape<typeof brokerV1.AgentSessionSchema> {
  return {
    id: row.id,
    agentId: row.agent_id,
    connectionId: row.connection_id,
    workspaceId: row.workspace_id,
    status: row.status,
    createdAt: ts(row.created_at),
    closedAt: ts(row.closed_at),
    closeReason: row.close_reason,
  };
}

export function createAgentHandlers(
  agents: AgentStore,
  connections: ConnectionService,
): AgentHandlers {
  return {
    async createAgent(request, context) {
      const row = await agents.create(
        {
          workspaceId: request.workspaceId,
          name: request.name,
          description: request.description,
          metadata: request.metadata,
        },
        callerFrom(context),
      );
      return agentMessage(row);
    },
    async listAgents(request) {
      return { agents: (await agents.list(request.workspaceId)).map(agentMessage) };
    },
    async getAgent(request) {
      return agentMessage(await agents.get(request.id, request.workspaceId || undefined));
    },
    async disableAgent(request, context) {
      return agentMessage(
        await agents.disable(request.id, request.workspaceId || undefined, callerFrom(context)),
      );
    },

    async createAgentSession(request) {
      if (!request.agentId) throw new AtriumError(Code.InvalidArgument, "agent_id is required");
      const connection = await connections.get(
        request.connectionId,
        request.workspaceId || undefined,
      );
      if (connection.revoked_at)
        throw new AtriumError(Code.FailedPrecondition, "connection is revoked");
      return sessionMessage(await agents.openSession(request.agentId, connection));
    },
    async getAgentSession(request) {
      return sessionMessage(await agents.getSession(request.id));
    },
  };
}
