import { createHash } from "node:crypto";

/** The broker's client_secret_fingerprint: SHA-256 of the secret, hex, first 16 characters. */
export function secretFingerprint(secret: string): string {
  return createHash("sha256").update(secret, "utf8").digest("hex").slice(0, 16);
}
