-- The order chains were last saved in: of chains whose newest messages carry one time (a client
-- storing a whole session with its date), the recent pages put first the one that took a
-- message last (src/store/chains.ts, `recent`). A sequence, not a clock: saves can come within
-- one clock tick (PGlite's clock counts milliseconds).
CREATE SEQUENCE memory_chains_saved_seq;
ALTER TABLE memory_chains ADD COLUMN saved_seq bigint NOT NULL
  DEFAULT nextval('memory_chains_saved_seq');

DROP INDEX memory_chains_user;
DROP INDEX memory_chains_scope;
CREATE INDEX memory_chains_user ON memory_chains (tenant_id, user_id, last_event_at DESC, saved_seq DESC)
  WHERE status <> 'archived';
CREATE INDEX memory_chains_scope ON memory_chains
  (tenant_id, user_id, agent_id, last_event_at DESC, saved_seq DESC)
  WHERE status <> 'archived';
