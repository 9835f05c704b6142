-- Safe retries of StoreInteraction and StoreEvent: the first request with a key claims it in the
-- same transaction as its events, so a retry (on this instance or another) finds the claim and
-- gets the stored response instead of storing the events again. Keys older than a day are purged
-- by the scheduled memory cycle.

CREATE TABLE memory_idempotency (
  tenant_id text NOT NULL,
  operation text NOT NULL,
  key text NOT NULL,
  response jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, operation, key)
);
CREATE INDEX memory_idempotency_created_at ON memory_idempotency (created_at);
