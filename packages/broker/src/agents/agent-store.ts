import { randomUUID } from "node:crypto";
import { AtriumError, Code, type Sql } from "@atrium/kit";
import { type CallerContext, writeAuditEvent } from "../audit/audit-log.js";

export interface AgentRecord {
  id: string;
  workspace_id: string;
  name: string;
  description: string;
  metadata: Record<string, string>;
  created_at: Date;
  disabled_at: Date | null;
}

export interface AgentInput {
  workspaceId: string;
  name: string;
  description: string;
  metadata: Record<string, string>;
}

export interface AgentSessionRecord {
  id: string;
  agent_id: string;
  connection_id: string;
  workspace_id: string;
  status: string;
  close_reason: string;
  created_at: Date;
  closed_at: Date | null;
}

const MAX_NAME = 100;
const MAX_DESCRIPTION = 1000;
const MAX_METADATA_ENTRIES = 50;
const MAX_METADATA_KEY = 100;
const MAX_METADATA_VALUE = 1000;

/** Every problem at once, so a caller fixes its request in one round. */
export function validateAgentInput(input: AgentInput): string[] {
  const problems: string[] = [];
  if (!input.workspaceId.trim()) problems.push("workspace_id is required");
  const name = input.name.trim();
  if (!name) problems.push("name is required");
  else if (name !== input.name) problems.push("name must not start or end with whitespace");
  else if (name.length > MAX_NAME) problems.push(`name is longer than ${MAX_NAME} characters`);
  if (input.description.length > MAX_DESCRIPTION)
    problems.push(`description is longer than ${MAX_DESCRIPTION} characters`);
  const entries = Object.entries(input.metadata);
  if (entries.length > MAX_METADATA_ENTRIES)
    problems.push(`metadata has more than ${MAX_METADATA_ENTRIES} entries`);
  for (const [key, value] of entries) {
    if (!key || key.length > MAX_METADATA_KEY)
      problems.push(`metadata key "${key.slice(0, 20)}" must be 1-${MAX_METADATA_KEY} characters`);
    if (value.length > MAX_METADATA_VALUE)
      problems.push(`metadata value of "${key.slice(0, 20)}" is longer than ${MAX_METADATA_VALUE}`);
  }
  return problems;
}

const notFound = (id: string) => new AtriumError(Code.NotFound, `agent ${id} not found`);

/** Agents and the sessions opened for them; every change is audited in its own transaction. */
export function createAgentStore(sql: Sql) {
  async function get(id: string, workspaceId?: string): Promise<AgentRecord> {
    const { rows } = await sql.query<AgentRecord>("SELECT * FROM broker_agents WHERE id = $1", [
      id,
    ]);
    // Another workspace's agent is reported as missing, so ids do not leak across workspaces.
    if (!rows[0] || (workspaceId && rows[0].workspace_id !== workspaceId)) throw notFound(id);
    return rows[0];
  }

  return {
    get,

    async create(input: AgentInput, caller: CallerContext): Promise<AgentRecord> {
      const problems = validateAgentInput(input);
      if (problems.length > 0)
        throw new AtriumError(Code.InvalidArgument, `invalid agent: ${problems.join("; ")}`);
      return sql.transaction(async (tx) => {
        const { rows } = await tx.query<AgentRecord>(
          `INSERT INTO broker_agents (id, workspace_id, name, description, metadata)
           VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT (workspace_id, name) WHERE disabled_at IS NULL DO NOTHING
           RETURNING *`,
          [
            randomUUID(),
            input.workspaceId,
            input.name,
            input.description,
            JSON.stringify(input.metadata),
          ],
        );
        const row = rows[0];
        if (!row)
          throw new AtriumError(
            Code.AlreadyExists,
            `workspace ${input.workspaceId} already has an enabled agent named "${input.name}"`,
          );
        await writeAuditEvent(tx, {
          eventType: "agent.created",
          resourceId: row.id,
          data: { workspace_id: row.workspace_id, name: row.name },
          caller,
        });
        return row;
      });
    },

    async list(workspaceId: string): Promise<AgentRecord[]> {
      if (!workspaceId) throw new AtriumError(Code.InvalidArgument, "workspace_id is required");
      const { rows } = await sql.query<AgentRecord>(
        "SELECT * FROM broker_agents WHERE workspace_id = $1 ORDER BY created_at, id",
        [workspaceId],
      );
      return rows;
    },

    async disable(id: string, workspaceId: string | undefined, caller: CallerContext) {
      await get(id, workspaceId);
      return sql.transaction(async (tx) => {
        // The row lock waits for sessions being opened (they hold FOR SHARE), so none stays open.
        const { rows } = await tx.query<AgentRecord>(
          `UPDATE broker_agents SET disabled_at = now()
           WHERE id = $1 AND disabled_at IS NULL RETURNING *`,
          [id],
        );
        const row = rows[0];
        if (!row) {
          const { rows: current } = await tx.query<AgentRecord>(
            "SELECT * FROM broker_agents WHERE id = $1",
            [id],
          );
          return current[0] as AgentRecord;
        }
        const closed = await tx.query(
          `UPDATE broker_agent_sessions SET status = 'closed', closed_at = now(), close_reason = 'agent_disabled'
           WHERE agent_id = $1 AND status = 'open'`,
          [id],
        );
        await writeAuditEvent(tx, {
          eventType: "agent.disabled",
          resourceId: id,
          data: { workspace_id: row.workspace_id, sessions_closed: closed.rowCount },
          caller,
        });
        return row;
      });
    },

    /** Opens a session for an enabled agent of the connection's workspace. */
    async openSession(agentId: string, connection: { id: string; workspace_id: string }) {
      return sql.transaction(async (tx) => {
        const { rows: agents } = await tx.query<AgentRecord>(
          "SELECT * FROM broker_agents WHERE id = $1 FOR SHARE",
          [agentId],
        );
        const agent = agents[0];
        if (!agent || agent.workspace_id !== connection.workspace_id) throw notFound(agentId);
        if (agent.disabled_at)
          throw new AtriumError(Code.FailedPrecondition, `agent ${agentId} is disabled`);
        const { rows } = await tx.query<AgentSessionRecord>(
          `INSERT INTO broker_agent_sessions (id, agent_id, connection_id, workspace_id)
           VALUES ($1, $2, $3, $4) RETURNING *`,
          [randomUUID(), agent.id, connection.id, connection.workspace_id],
        );
        return rows[0] as AgentSessionRecord;
      });
    },

    async getSession(id: string): Promise<AgentSessionRecord> {
      const { rows } = await sql.query<AgentSessionRecord>(
        "SELECT * FROM broker_agent_sessions WHERE id = $1",
        [id],
      );
      if (!rows[0]) throw new AtriumError(Code.NotFound, `agent session ${id} not found`);
      return rows[0];
    },
  };
}

export type AgentStore = ReturnType<typeof createAgentStore>;
