-- Webhook subscriptions and their outbox. A state change inserts one delivery row per matching
-- subscription in its own transaction; the delivery worker claims due rows with a lease.
CREATE TABLE IF NOT EXISTS broker_webhooks (
  id text PRIMARY KEY,
  name text NOT NULL UNIQUE,
  url text NOT NULL,
  event_types text[] NOT NULL,
  -- Vault ciphertext of the whsec_ secret, "webhook:<id>" as additional data.
  secret_enc text NOT NULL,
  secret_fingerprint text NOT NULL,
  enabled boolean NOT NULL DEFAULT true,
  description text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS broker_webhook_deliveries (
  -- The webhook-id header: one per event and subscription, the same on every retry.
  id text PRIMARY KEY,
  webhook_id text NOT NULL REFERENCES broker_webhooks (id) ON DELETE CASCADE,
  event_type text NOT NULL,
  -- The exact bytes that are signed and sent, so every retry carries the same body.
  body text NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  lease_owner text,
  lease_until timestamptz,
  last_error text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL DEFAULT now(),
  delivered_at timestamptz
);

CREATE INDEX IF NOT EXISTS broker_webhook_deliveries_due ON broker_webhook_deliveries (next_attempt_at)
  WHERE status = 'pending';
CREATE INDEX IF NOT EXISTS broker_webhook_deliveries_webhook
  ON broker_webhook_deliveries (webhook_id, created_at DESC);

CREATE TABLE IF NOT EXISTS broker_webhook_attempts (
  delivery_id text NOT NULL REFERENCES broker_webhook_deliveries (id) ON DELETE CASCADE,
  attempt integer NOT NULL,
  -- 0 when no response arrived (refused, timed out).
  status_code integer NOT NULL DEFAULT 0,
  error text NOT NULL DEFAULT '',
  duration_ms integer NOT NULL,
  attempted_at timestamptz NOT NULL,
  PRIMARY KEY (delivery_id, attempt)
);
