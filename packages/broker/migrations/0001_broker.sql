-- Credential broker schema: providers, connections, agent sessions, audit log.

CREATE TABLE IF NOT EXISTS broker_providers (
  id text PRIMARY KEY,
  name text NOT NULL UNIQUE,
  auth_type text NOT NULL,
  client_id text NOT NULL DEFAULT '',
  -- internal backend: vault ciphertext (key id prefix); empty with an external backend.
  client_secret_enc text,
  -- external backend: immutable version reference, e.g. projects/p/secrets/s/versions/3.
  client_secret_ref text,
  client_secret_fingerprint text NOT NULL DEFAULT '',
  secret_backend text NOT NULL DEFAULT 'internal',
  scopes text[] NOT NULL DEFAULT '{}',
  auth_url text NOT NULL DEFAULT '',
  token_url text NOT NULL DEFAULT '',
  issuer text NOT NULL DEFAULT '',
  enable_discovery boolean NOT NULL DEFAULT false,
  well_known_url text NOT NULL DEFAULT '',
  api_base_url text NOT NULL DEFAULT '',
  user_info_endpoint text NOT NULL DEFAULT '',
  description text NOT NULL DEFAULT '',
  category text NOT NULL DEFAULT '',
  params jsonb NOT NULL DEFAULT '{}',
  saml_idp_entity_id text NOT NULL DEFAULT '',
  saml_idp_sso_url text NOT NULL DEFAULT '',
  saml_idp_x509_cert text NOT NULL DEFAULT '',
  saml_sp_entity_id text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS broker_connections (
  id text PRIMARY KEY,
  workspace_id text NOT NULL,
  provider_id text NOT NULL REFERENCES broker_providers (id) ON DELETE RESTRICT,
  auth_type text NOT NULL,
  status text NOT NULL CHECK (status IN ('active', 'attention', 'failed', 'revoked')),
  health_status text NOT NULL DEFAULT 'healthy',
  -- Vault ciphertext of the credential JSON, the connection id as additional data; NULL once revoked.
  credential_enc text,
  scopes text[] NOT NULL DEFAULT '{}',
  subject text NOT NULL DEFAULT '',
  expires_at timestamptz,
  refresh_due_at timestamptz,
  last_refreshed_at timestamptz,
  refresh_count integer NOT NULL DEFAULT 0,
  refresh_failures integer NOT NULL DEFAULT 0,
  lease_owner text,
  lease_until timestamptz,
  revoked_at timestamptz,
  revocation jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX IF NOT EXISTS broker_connections_workspace ON broker_connections (workspace_id, created_at);
CREATE INDEX IF NOT EXISTS broker_connections_due ON broker_connections (refresh_due_at)
  WHERE status = 'active' AND revoked_at IS NULL;

CREATE TABLE IF NOT EXISTS broker_agent_sessions (
  id text PRIMARY KEY,
  agent_id text NOT NULL,
  connection_id text NOT NULL REFERENCES broker_connections (id),
  workspace_id text NOT NULL,
  status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'closed')),
  close_reason text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL DEFAULT now(),
  closed_at timestamptz
);

CREATE INDEX IF NOT EXISTS broker_agent_sessions_open ON broker_agent_sessions (connection_id)
  WHERE status = 'open';

CREATE TABLE IF NOT EXISTS audit_events (
  id text PRIMARY KEY,
  event_type text NOT NULL,
  resource_id text NOT NULL DEFAULT '',
  caller_ip text NOT NULL DEFAULT '',
  user_agent text NOT NULL DEFAULT '',
  data jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);

CREATE INDEX IF NOT EXISTS audit_events_created ON audit_events (created_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS audit_events_type ON audit_events (event_type, created_at DESC);
CREATE INDEX IF NOT EXISTS audit_events_resource ON audit_events (resource_id, created_at DESC);
