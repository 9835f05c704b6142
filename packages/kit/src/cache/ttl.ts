/**
 * Converts a TTL in seconds to whole milliseconds. Both adapters accept fractional seconds (Redis
 * through PX/PEXPIRE) and reject non-positive values, which Redis would treat as "delete now".
 */
export function ttlMilliseconds(ttlSeconds: number): number {
  if (!Number.isFinite(ttlSeconds) || ttlSeconds <= 0) {
    throw new RangeError(`TTL must be a positive number of seconds, got ${ttlSeconds}`);
  }
  return Math.max(1, Math.ceil(ttlSeconds * 1000));
}
