import { createHash, timingSafeEqual } from "node:crypto";

/**
 * The one normalisation of a presented or configured API key: surrounding whitespace is no part
 * of it. HTTP/1 strips it from header values before anyone sees them and HTTP/2 keeps it, so
 * without this a padded key passed on REST and failed on gRPC. Empty means absent.
 */
export function normalizeApiKey(value: string | null | undefined): string | undefined {
  const key = value?.trim();
  return key ? key : undefined;
}

/** SHA-256 of the normalised key: equal-length buffers, so comparison is constant-time. */
export const apiKeyDigest = (key: string) =>
  createHash("sha256")
    .update(normalizeApiKey(key) ?? "", "utf8")
    .digest();

/**
 * The same digest in hex: how a key is named where a list must not hold the key itself (MCP
 * scopes' `key_sha256`) and where a caller is told apart without its key (MCP cancellation).
 */
export const apiKeyDigestHex = (key: string) => apiKeyDigest(key).toString("hex");

/** Whether a presented key matches any digest; no early exit reveals which one, or whether any. */
export function matchesApiKey(presented: string, digests: readonly Buffer[]): boolean {
  const candidate = apiKeyDigest(presented);
  let match = false;
  for (const digest of digests) match = timingSafeEqual(candidate, digest) || match;
  return match;
}
