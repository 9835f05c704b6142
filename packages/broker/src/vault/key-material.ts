import { createHash } from "node:crypto";

/**
 * Decodes a 32-byte key given as 64 hex characters or base64 (standard or url-safe). Returns
 * undefined for anything else; callers name the variable, never the value.
 */
export function decodeKey(text: string): Buffer | undefined {
  const value = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(value)) return Buffer.from(value, "hex");
  if (/^[A-Za-z0-9+/_-]+={0,2}$/.test(value)) {
    const bytes = Buffer.from(value.replace(/-/g, "+").replace(/_/g, "/"), "base64");
    if (bytes.length === 32) return bytes;
  }
  return undefined;
}

/**
 * Key id derived from the key itself, so rotating `ENCRYPTION_KEY` (old one moved to
 * `ENCRYPTION_KEY_PREVIOUS`) needs no id bookkeeping. 8 hex characters reveal nothing usable.
 */
export function keyId(key: Buffer): string {
  return createHash("sha256").update("atrium-vault-key-id").update(key).digest("hex").slice(0, 8);
}

/** Truncated SHA-256 of a client secret, returned as client_secret_fingerprint. */
export function secretFingerprint(secret: string): string {
  return createHash("sha256").update(secret, "utf8").digest("hex").slice(0, 16);
}
