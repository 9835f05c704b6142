import type { Cache } from "@atrium/kit";

/**
 * Waits until the cache's pub/sub connection is ready. ioredis may write a SUBSCRIBE during its
 * connection handshake, whose reply puts the connection in subscriber mode before the ready check
 * runs; the check then fails and the subscription silently never delivers. A subscription made
 * right after the cache is created is queued until the connection is ready instead, so one
 * throwaway subscription closes that window. Call it straight after creating the cache.
 */
export async function warmUpCache(cache: Cache): Promise<void> {
  const unsubscribe = await cache.subscribe("atrium:chat:warmup", () => {});
  await unsubscribe();
}
