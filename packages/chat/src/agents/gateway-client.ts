import { createGatewayClient, type GatewayClient } from "@atrium/sdk";

/** Where the chat host reaches the credential gateway (GATEWAY_URL, GATEWAY_API_KEY). */
export interface GatewaySettings {
  url: string;
  apiKey?: string;
}

/** The gateway client of the sub-agents and the consent watch. */
export function chatGatewayClient(gateway: GatewaySettings): GatewayClient {
  return createGatewayClient({
    baseUrl: gateway.url,
    apiKey: gateway.apiKey,
    // Token calls carry no signal of their own; without this a stuck gateway would hold the step.
    fetch: (input, init) =>
      fetch(input, { ...init, signal: init?.signal ?? AbortSignal.timeout(10_000) }),
  });
}
