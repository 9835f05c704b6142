-- A question that names a day ("what did I cook on 5 January?") reads the turns said around it
-- (src/store/dated-turns.ts): by time within one user, messages only.
CREATE INDEX memory_events_said ON memory_events (tenant_id, user_id, occurred_at)
  WHERE search_vector IS NOT NULL;
