import { type brokerV1, gatewayV1 } from "@atrium/api";
import { create } from "@bufbuild/protobuf";
import type { BrokerClient } from "../broker/broker-client.js";

type Strategy = gatewayV1.CredentialStrategy;

const naturalStrategy: Record<string, string> = {
  oauth2: "oauth2",
  api_key: "api_key",
  basic_auth: "basic_auth",
};

/**
 * The strategy named by the provider's params (`credential_strategy`, `credential_header`,
 * `credential_header_prefix`, `credential_query_param`, `aws_region`, `aws_service`), else the
 * natural one of its auth type; SAML assertions have none.
 */
export function strategyFor(provider: brokerV1.Provider): Strategy {
  const params = provider.params;
  return create(gatewayV1.CredentialStrategySchema, {
    type: params.credential_strategy ?? naturalStrategy[provider.authType] ?? "",
    headerName: params.credential_header ?? "",
    headerPrefix: params.credential_header_prefix ?? "",
    paramName: params.credential_query_param ?? "",
    region: params.aws_region ?? "",
    service: params.aws_service ?? "",
  });
}

export interface StrategyCacheOptions {
  broker: BrokerClient;
  /** How long a provider's strategy is reused; a changed provider takes effect after it. */
  ttlMs: number;
}

export interface StrategyCache {
  forConnection(connectionId: string, workspaceId: string, signal?: AbortSignal): Promise<Strategy>;
  forget(connectionId: string): void;
}

/** A connection's provider never changes, so only the provider's params need a time limit. */
export function createStrategyCache(options: StrategyCacheOptions): StrategyCache {
  const providerOf = new Map<string, string>();
  const strategies = new Map<string, { strategy: Strategy; until: number }>();

  return {
    async forConnection(connectionId, workspaceId, signal) {
      let providerId = providerOf.get(connectionId);
      if (providerId === undefined) {
        const connection = await options.broker.getConnection(
          { id: connectionId, workspaceId },
          { signal },
        );
        providerId = connection.providerId;
        providerOf.set(connectionId, providerId);
      }
      const cached = strategies.get(providerId);
      if (cached && cached.until > Date.now()) return cached.strategy;
      const strategy = strategyFor(
        await options.broker.getProvider({ id: providerId }, { signal }),
      );
      strategies.set(providerId, { strategy, until: Date.now() + options.ttlMs });
      return strategy;
    },
    forget(connectionId) {
      providerOf.delete(connectionId);
    },
  };
}
