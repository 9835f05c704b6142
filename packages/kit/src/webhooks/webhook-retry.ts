const MAX_RETRY_DELAY_MS = 6 * 3600_000;

/**
 * Delay before retry `attempt` (1 = after the first failure): the base times 4^(attempt-1),
 * capped at 6 h, the upper half jittered so receivers that failed together are not retried
 * together. With a 5 s base: ~5 s, 20 s, 80 s, 5 min, 21 min, 85 min, 6 h, ...
 */
export function retryDelayMs(attempt: number, baseMs: number, random = Math.random()): number {
  const delay = Math.min(MAX_RETRY_DELAY_MS, baseMs * 4 ** Math.min(attempt - 1, 20));
  return delay / 2 + (random * delay) / 2;
}
