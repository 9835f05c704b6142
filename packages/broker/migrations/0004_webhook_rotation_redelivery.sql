-- Secret rotation with overlap: the rotated-out secret (the vault ciphertext it had, bound to
-- "webhook:<id>" like the current one) is also signed with until it expires.
ALTER TABLE broker_webhooks ADD COLUMN IF NOT EXISTS previous_secret_enc text;
ALTER TABLE broker_webhooks ADD COLUMN IF NOT EXISTS previous_secret_expires_at timestamptz;

-- Redelivery: the retry window of a redelivered row runs from here instead of created_at.
ALTER TABLE broker_webhook_deliveries ADD COLUMN IF NOT EXISTS redelivered_at timestamptz;
