import { createHash, timingSafeEqual } from "node:crypto";
import { AuthenticationError } from "./authentication-error.js";

const digest = (value: string) => createHash("sha256").update(value, "utf8").digest();

function presentedKey(headers: Headers): string | undefined {
  const header = headers.get("x-api-key");
  if (header) return header.trim();
  const match = /^Bearer\s+(\S+)\s*$/i.exec(headers.get("authorization") ?? "");
  return match?.[1];
}

/**
 * Checks `X-API-Key: K` or `Authorization: Bearer K` against the one shared key. Comparing
 * SHA-256 digests keeps the comparison constant-time whatever the presented length.
 */
export function createApiKeyCheck(apiKey: string): (headers: Headers) => void {
  const expected = digest(apiKey);
  return (headers) => {
    const presented = presentedKey(headers);
    if (presented === undefined) throw new AuthenticationError("api_key", "missing API key");
    if (!timingSafeEqual(digest(presented), expected)) {
      throw new AuthenticationError("api_key", "invalid API key");
    }
  };
}
