import type { BrokerClient, LiveProvider } from "./broker-client.js";
import { runPool } from "./worker-pool.js";

/** The broker's providers with full profiles, fetched with a bounded number of requests in flight. */
export async function fetchLiveProviders(
  client: BrokerClient,
  concurrency: number,
): Promise<LiveProvider[]> {
  const listed = await client.listProviders();
  return runPool(listed, concurrency, (provider) => client.getProvider(provider.id));
}
