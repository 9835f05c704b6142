-- Forget (src/service/forget.ts): erasing events must reach everything derived from them.
-- An idempotency record names the events its write stored, so that a retried write cannot
-- answer "stored" for events erased since; a graph edge names the chains it was promoted from,
-- like an entity, so that an edge resting only on erased turns goes with them.
ALTER TABLE memory_idempotency ADD COLUMN event_ids uuid[] NOT NULL DEFAULT '{}';
CREATE INDEX memory_idempotency_events ON memory_idempotency USING gin (event_ids);
ALTER TABLE memory_edges ADD COLUMN source_chain_ids uuid[] NOT NULL DEFAULT '{}';

-- The audit of erasures: who asked, which scope, how much went; never what it said.
CREATE TABLE memory_erasures (
  id uuid PRIMARY KEY,
  tenant_id text NOT NULL,
  user_id text NOT NULL,
  -- The agent scope erased; null for the user across agents or for given events.
  agent_id text,
  kind text NOT NULL CHECK (kind IN ('events', 'agent', 'user')),
  requested_by text NOT NULL,
  events_erased integer NOT NULL,
  chains_erased integer NOT NULL,
  chains_rebuilt integer NOT NULL,
  entities_erased integer NOT NULL,
  payloads_erased integer NOT NULL,
  idempotency_records_erased integer NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX memory_erasures_user ON memory_erasures (tenant_id, user_id, created_at DESC);
