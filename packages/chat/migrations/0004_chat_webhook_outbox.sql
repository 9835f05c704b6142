-- Step events (chat.step.completed / yielded / failed) waiting for delivery to CHAT_WEBHOOK_URL:
-- a durable outbox, so an event recorded by a host that then dies is sent by the next one.

CREATE TABLE chat_webhook_outbox (
  id text PRIMARY KEY,
  event_type text NOT NULL,
  body text NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  last_error text,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  lease_owner text,
  lease_until timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  settled_at timestamptz
);

CREATE INDEX chat_webhook_outbox_due ON chat_webhook_outbox (next_attempt_at) WHERE status = 'pending';
CREATE INDEX chat_webhook_outbox_settled ON chat_webhook_outbox (settled_at) WHERE status <> 'pending';
