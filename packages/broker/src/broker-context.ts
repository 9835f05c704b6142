import type { Logger, Sql } from "@atrium/kit";
import type { OAuthClient } from "./oauth/oauth-client.js";
import type { StateCodec } from "./oauth/state-token.js";
import type { ProviderStore } from "./providers/provider-store.js";
import type { Vault } from "./vault/vault.js";

/** Tunables of the connection lifecycle; defaults in broker-config.ts. */
export interface ConnectionSettings {
  /** Lifetime assumed when a provider omits expires_in, so such tokens are still refreshed. */
  defaultTokenLifetimeSeconds: number;
  /** Refresh this long before expiry. */
  refreshSkewSeconds: number;
  /** How long a refresh lease is held before another instance may take over. */
  leaseSeconds: number;
  /** Deadline of the upstream RFC 7009 calls of one revocation. */
  revocationTimeoutMs: number;
  /** Deadline of the local teardown statements of one revocation. */
  teardownTimeoutMs: number;
  /** Transient refresh failures in a row before a connection is marked failed. */
  maxRefreshFailures: number;
  /** Lifetime of an OAuth/SAML state. */
  stateTtlSeconds: number;
  allowedReturnDomains: string[];
  defaultRedirectUri: string;
}

/** Everything the connection operations share; one per broker instance. */
export interface BrokerContext {
  sql: Sql;
  vault: Vault;
  providers: ProviderStore;
  oauth: OAuthClient;
  states: StateCodec;
  settings: ConnectionSettings;
  /** Lease owner id of this instance. */
  instanceId: string;
  logger: Logger;
}
