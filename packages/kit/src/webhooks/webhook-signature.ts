import { createHmac, randomBytes } from "node:crypto";

const SECRET_PREFIX = "whsec_";
/** Standard Webhooks: a secret of 24 to 64 random bytes. */
const MIN_SECRET_BYTES = 24;
const MAX_SECRET_BYTES = 64;

/** A new `whsec_` secret of 32 random bytes. */
export function generateWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString("base64")}`;
}

/** The HMAC key of a `whsec_` secret; undefined when the text is not one. */
export function webhookSecretKey(secret: string): Buffer | undefined {
  if (!secret.startsWith(SECRET_PREFIX)) return undefined;
  const encoded = secret.slice(SECRET_PREFIX.length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) return undefined;
  const key = Buffer.from(encoded, "base64");
  if (key.length < MIN_SECRET_BYTES || key.length > MAX_SECRET_BYTES) return undefined;
  return key;
}

/** `v1,` + base64 HMAC-SHA256 of `${id}.${timestamp}.${body}` (Standard Webhooks). */
export function signWebhook(key: Buffer, id: string, timestamp: number, body: string): string {
  const mac = createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64");
  return `v1,${mac}`;
}
