-- Where an event's text came from (src/domain.ts, EVENT_SOURCES): user, agent, system, tool, or
-- memory quoted back. Rows stored before this have none and read as their role. A quote of
-- memory is kept for the context window but is no search evidence: it gets no search vector, so
-- no search path (lexical, feedback, pending, chain turns, answered turns, named days) and no
-- word statistic sees it. The generated column is rebuilt for that; its indexes with it.
ALTER TABLE memory_events ADD COLUMN source text
  CHECK (source IN ('user', 'agent', 'system', 'tool', 'memory'));

DROP INDEX memory_events_search;
DROP INDEX memory_events_said;
ALTER TABLE memory_events DROP COLUMN search_vector;
ALTER TABLE memory_events ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (
  CASE WHEN type = 'message' AND role <> 'system' AND source IS DISTINCT FROM 'memory'
    THEN to_tsvector('english', content) END
) STORED;
CREATE INDEX memory_events_search ON memory_events USING gin (search_vector)
  WHERE search_vector IS NOT NULL;
CREATE INDEX memory_events_said ON memory_events (tenant_id, user_id, occurred_at)
  WHERE search_vector IS NOT NULL;
