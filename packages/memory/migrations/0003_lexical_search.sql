-- Lexical search (hybrid retrieval, src/retrieval/). Every user or agent message and every chain's
-- topic and summary carry an English tsvector (stemmed, stopwords dropped) under a GIN index; the
-- same on PostgreSQL and PGlite. PostgreSQL's own rankings ignore how rare a word is, so each
-- user's document frequencies are kept here for BM25: the chain check adds a message once, when
-- it moves the message out of 'pending' (store/events.ts, markChained).

ALTER TABLE memory_events ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (
  CASE WHEN type = 'message' AND role <> 'system' THEN to_tsvector('english', content) END
) STORED;
CREATE INDEX memory_events_search ON memory_events USING gin (search_vector)
  WHERE search_vector IS NOT NULL;

ALTER TABLE memory_chains ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (
  to_tsvector('english', topic || ' ' || summary)
) STORED;
CREATE INDEX memory_chains_search ON memory_chains USING gin (search_vector);
-- From a matched message to the dialogue page it belongs to: set by the chain check when it
-- writes the chain (a merge moves the messages to the chain they were merged into).
ALTER TABLE memory_events ADD COLUMN chain_id uuid;
UPDATE memory_events e SET chain_id = x.chain_id
FROM (SELECT c.id AS chain_id, unnest(c.event_ids) AS event_id FROM memory_chains c) AS x
WHERE e.id = x.event_id;

-- The vector space a chain's embedding lives in: a service started with another embedder
-- re-embeds the chains that are not in its space (src/pipeline/reembed.ts).
ALTER TABLE memory_chains ADD COLUMN embedding_model text NOT NULL DEFAULT 'hash-384';

CREATE TABLE memory_lexicon (
  tenant_id text NOT NULL,
  user_id text NOT NULL,
  lexeme text NOT NULL,
  documents integer NOT NULL,
  PRIMARY KEY (tenant_id, user_id, lexeme)
);

CREATE TABLE memory_lexicon_totals (
  tenant_id text NOT NULL,
  user_id text NOT NULL,
  documents bigint NOT NULL,
  -- Sum of the documents' lengths in lexemes, for BM25's length normalisation.
  lexemes bigint NOT NULL,
  PRIMARY KEY (tenant_id, user_id)
);

-- Messages already through the chain check; pending ones are counted when the check runs.
INSERT INTO memory_lexicon (tenant_id, user_id, lexeme, documents)
SELECT e.tenant_id, e.user_id, t.lexeme, count(*)
FROM memory_events e, unnest(tsvector_to_array(e.search_vector)) AS t(lexeme)
WHERE e.search_vector IS NOT NULL AND e.chain_state = 'done'
GROUP BY e.tenant_id, e.user_id, t.lexeme;

INSERT INTO memory_lexicon_totals (tenant_id, user_id, documents, lexemes)
SELECT tenant_id, user_id, count(*), sum(length(search_vector))
FROM memory_events
WHERE search_vector IS NOT NULL AND chain_state = 'done'
GROUP BY tenant_id, user_id;
