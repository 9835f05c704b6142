-- Memory service schema: one schema for PostgreSQL and PGlite. Vector search is exact by default
-- (memory_chains.embedding); the pgvector table with its HNSW index is created at start-up only
-- where the extension exists (see src/store/vector-search.ts), so this file needs no extension.

CREATE TABLE memory_sessions (
  id uuid PRIMARY KEY,
  tenant_id text NOT NULL,
  user_id text NOT NULL,
  agent_id text NOT NULL DEFAULT '',
  metadata jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX memory_sessions_scope ON memory_sessions (tenant_id, user_id, agent_id);

CREATE TABLE memory_events (
  id uuid PRIMARY KEY,
  -- Insertion order: the STM window is the most recently stored events of a scope.
  seq bigint GENERATED ALWAYS AS IDENTITY,
  session_id uuid NOT NULL REFERENCES memory_sessions (id) ON DELETE CASCADE,
  tenant_id text NOT NULL,
  user_id text NOT NULL,
  agent_id text NOT NULL,
  role text NOT NULL CHECK (role IN ('user', 'agent', 'system')),
  type text NOT NULL CHECK (type IN ('message', 'thought', 'action', 'observation')),
  content text NOT NULL DEFAULT '',
  metadata jsonb NOT NULL DEFAULT '{}',
  blob_uri text,
  blob_mime_type text,
  occurred_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  -- Repeated automation events of one workflow execution collapse into the newest one: it
  -- carries the count, the older rows point at it and leave the window (still kept for audit).
  coalesced_count integer NOT NULL DEFAULT 1,
  superseded_by uuid,
  -- Messages wait for the chain check; other events never enter chains.
  chain_state text NOT NULL CHECK (chain_state IN ('pending', 'done', 'skipped'))
);
CREATE INDEX memory_events_window ON memory_events (tenant_id, user_id, agent_id, seq DESC)
  WHERE superseded_by IS NULL;
CREATE INDEX memory_events_pending ON memory_events (tenant_id, user_id, agent_id, seq)
  WHERE chain_state = 'pending';

-- Dialogue chains (MTM). One open chain per scope grows until the topic changes.
CREATE TABLE memory_chains (
  id uuid PRIMARY KEY,
  tenant_id text NOT NULL,
  user_id text NOT NULL,
  agent_id text NOT NULL,
  session_id uuid NOT NULL,
  status text NOT NULL CHECK (status IN ('open', 'closed', 'archived')),
  topic text NOT NULL DEFAULT '',
  summary text NOT NULL DEFAULT '',
  content text NOT NULL DEFAULT '',
  metadata jsonb NOT NULL DEFAULT '{}',
  -- Provenance: the events the chain was built from.
  event_ids uuid[] NOT NULL DEFAULT '{}',
  workflow_id text,
  -- Unit vector of the whole chain, used for search and merging.
  embedding real[] NOT NULL,
  -- Sum of the user messages' vectors, for continuity checks against the newest message.
  user_vector_sum real[],
  analysis_method text NOT NULL DEFAULT 'extractive',
  entities jsonb NOT NULL DEFAULT '[]',
  relations jsonb NOT NULL DEFAULT '[]',
  importance double precision NOT NULL DEFAULT 0.5,
  density double precision NOT NULL DEFAULT 0.5,
  quality double precision NOT NULL DEFAULT 0,
  recall_strength double precision NOT NULL DEFAULT 1,
  access_count integer NOT NULL DEFAULT 0,
  last_access_at timestamptz NOT NULL,
  last_strengthened_at timestamptz,
  heat double precision,
  promoted_at timestamptz,
  archived_at timestamptz,
  first_event_at timestamptz NOT NULL,
  last_event_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX memory_chains_user ON memory_chains (tenant_id, user_id, last_event_at DESC)
  WHERE status <> 'archived';
CREATE INDEX memory_chains_scope ON memory_chains (tenant_id, user_id, agent_id, last_event_at DESC)
  WHERE status <> 'archived';
CREATE UNIQUE INDEX memory_chains_one_open ON memory_chains (tenant_id, user_id, agent_id)
  WHERE status = 'open';
CREATE INDEX memory_chains_unpromoted ON memory_chains (created_at)
  WHERE status = 'closed' AND promoted_at IS NULL;

-- Long-term graph, per tenant and user.
CREATE TABLE memory_entities (
  id uuid PRIMARY KEY,
  tenant_id text NOT NULL,
  user_id text NOT NULL,
  name text NOT NULL,
  name_key text NOT NULL,
  type text NOT NULL,
  mentions integer NOT NULL DEFAULT 1,
  source_chain_ids uuid[] NOT NULL DEFAULT '{}',
  community integer,
  bridge_score integer,
  analysed_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (tenant_id, user_id, name_key)
);

CREATE TABLE memory_edges (
  tenant_id text NOT NULL,
  user_id text NOT NULL,
  source_id uuid NOT NULL REFERENCES memory_entities (id) ON DELETE CASCADE,
  target_id uuid NOT NULL REFERENCES memory_entities (id) ON DELETE CASCADE,
  relation text NOT NULL,
  confidence double precision NOT NULL,
  weight double precision NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (source_id, relation, target_id)
);
CREATE INDEX memory_edges_user ON memory_edges (tenant_id, user_id);
CREATE INDEX memory_edges_target ON memory_edges (target_id);
