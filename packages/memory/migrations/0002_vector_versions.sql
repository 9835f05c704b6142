-- Change tracking for the in-process exact vector index (PostgreSQL without pgvector): every
-- change to a chain's vector, status, agent or metadata takes the next version of its user, and
-- a deleted chain leaves a tombstone, so a reader catches up with one indexed query. The
-- per-user counter row is locked by each writer, so versions are assigned in commit order.

CREATE TABLE memory_vector_versions (
  tenant_id text NOT NULL,
  user_id text NOT NULL,
  version bigint NOT NULL,
  PRIMARY KEY (tenant_id, user_id)
);

ALTER TABLE memory_chains ADD COLUMN vector_version bigint NOT NULL DEFAULT 0;
CREATE INDEX memory_chains_vector_version ON memory_chains (tenant_id, user_id, vector_version);

CREATE TABLE memory_vector_tombstones (
  chain_id uuid PRIMARY KEY,
  tenant_id text NOT NULL,
  user_id text NOT NULL,
  version bigint NOT NULL
);
CREATE INDEX memory_vector_tombstones_user ON memory_vector_tombstones (tenant_id, user_id, version);

CREATE FUNCTION memory_next_vector_version(t text, u text) RETURNS bigint
LANGUAGE sql AS $$
  INSERT INTO memory_vector_versions (tenant_id, user_id, version) VALUES (t, u, 1)
  ON CONFLICT (tenant_id, user_id) DO UPDATE SET version = memory_vector_versions.version + 1
  RETURNING version
$$;

CREATE FUNCTION memory_chains_versioned() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    INSERT INTO memory_vector_tombstones (chain_id, tenant_id, user_id, version)
    VALUES (OLD.id, OLD.tenant_id, OLD.user_id, memory_next_vector_version(OLD.tenant_id, OLD.user_id))
    ON CONFLICT (chain_id) DO UPDATE SET version = EXCLUDED.version;
    RETURN OLD;
  END IF;
  IF TG_OP = 'INSERT'
     OR NEW.embedding IS DISTINCT FROM OLD.embedding
     OR NEW.status IS DISTINCT FROM OLD.status
     OR NEW.metadata IS DISTINCT FROM OLD.metadata
     OR NEW.agent_id IS DISTINCT FROM OLD.agent_id THEN
    NEW.vector_version := memory_next_vector_version(NEW.tenant_id, NEW.user_id);
  END IF;
  RETURN NEW;
END
$$;

CREATE TRIGGER memory_chains_versioned_write BEFORE INSERT OR UPDATE ON memory_chains
  FOR EACH ROW EXECUTE FUNCTION memory_chains_versioned();
CREATE TRIGGER memory_chains_versioned_delete AFTER DELETE ON memory_chains
  FOR EACH ROW EXECUTE FUNCTION memory_chains_versioned();
