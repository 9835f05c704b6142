-- Every search ranks a user's newest messages beside what matched its words
-- (src/retrieval/retrieval.ts): read newest first, across the user's agents.
CREATE INDEX memory_events_newest ON memory_events (tenant_id, user_id, seq DESC)
  WHERE search_vector IS NOT NULL;
