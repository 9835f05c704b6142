-- Agent identities: agent sessions are opened only for an enabled agent of the workspace.
CREATE TABLE IF NOT EXISTS broker_agents (
  id text PRIMARY KEY,
  workspace_id text NOT NULL,
  name text NOT NULL,
  description text NOT NULL DEFAULT '',
  metadata jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  disabled_at timestamptz
);

-- A disabled agent's name can be registered again.
CREATE UNIQUE INDEX IF NOT EXISTS broker_agents_enabled_name ON broker_agents (workspace_id, name)
  WHERE disabled_at IS NULL;
CREATE INDEX IF NOT EXISTS broker_agents_workspace ON broker_agents (workspace_id, created_at);

-- Disabling an agent closes its open sessions.
CREATE INDEX IF NOT EXISTS broker_agent_sessions_agent_open ON broker_agent_sessions (agent_id)
  WHERE status = 'open';
