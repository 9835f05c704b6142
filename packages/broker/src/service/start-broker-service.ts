import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import { brokerV1 } from "@atrium/api";
import {
  AtriumError,
  apiKeyAuthenticator,
  Code,
  createApiKeySet,
  createLogger,
  createServiceHost,
  createSql,
  hostSettingsFromEnv,
  type Logger,
  logLevel,
  migrateAtBoot,
  type ResourceStack,
  type RunningService,
  type Sql,
  startService,
} from "@atrium/kit";
import { credentials } from "@grpc/grpc-js";
import type { BrokerContext } from "../broker-context.js";
import { type BrokerConfig, loadBrokerConfig } from "../config/broker-config.js";
import { createConnectionService } from "../connections/connection-service.js";
import { createRefreshLoop, type RefreshLoop } from "../connections/refresh-loop.js";
import { createOAuthClient } from "../oauth/oauth-client.js";
import { createStateCodec } from "../oauth/state-token.js";
import { createProviderStore } from "../providers/provider-store.js";
import { createSamlFlow } from "../saml/saml-flow.js";
import { createGcpSecretBackend } from "../secrets/gcp-secret-backend.js";
import { createInternalSecretBackend } from "../secrets/internal-secret-backend.js";
import type { SecretBackend } from "../secrets/secret-backend.js";
import { keyId } from "../vault/key-material.js";
import { createVault } from "../vault/vault.js";
import { createWebhookStore } from "../webhooks/webhook-store.js";
import { createWebhookWorker, type WebhookWorker } from "../webhooks/webhook-worker.js";
import { createBrokerHandlers } from "./broker-handlers.js";
import { configureBrokerRest } from "./broker-rest.js";

export interface StartBrokerServiceOptions {
  env: NodeJS.ProcessEnv;
  logger?: Logger;
  /** An already open database (tests, benchmarks); otherwise DATABASE_URL or PGlite. */
  sql?: Sql;
}

export interface BrokerService extends RunningService {
  /** The refresh loop, exposed for tests and the benchmark (one pass on demand). */
  refreshLoop: RefreshLoop;
  /** The webhook delivery worker, exposed for tests (one pass on demand). */
  webhookWorker: WebhookWorker;
}

export const BROKER_MIGRATIONS_DIR = fileURLToPath(new URL("../../migrations", import.meta.url));

/**
 * Starts the credential broker: REST and gRPC from proto/broker/v1, migrations at boot, the
 * refresh loop, the webhook delivery worker. Configuration problems throw the kit's ConfigError,
 * one line naming the variable.
 */
export async function startBrokerService(
  options: StartBrokerServiceOptions,
): Promise<BrokerService> {
  const config = loadBrokerConfig(options.env);
  const logger = options.logger ?? createLogger({ name: "broker", level: logLevel(options.env) });
  return startService(logger, (resources) => start(config, logger, options, resources));
}

async function start(
  config: BrokerConfig,
  logger: Logger,
  options: StartBrokerServiceOptions,
  resources: ResourceStack,
): Promise<BrokerService> {
  const sql =
    options.sql ??
    (await createSql({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, name: "broker" }));
  if (!options.sql) resources.defer(() => sql.close());
  await migrateAtBoot({
    sql,
    enabled: config.autoMigrate,
    dir: config.migrationsDir ?? BROKER_MIGRATIONS_DIR,
    namespace: "broker",
    logger,
  });

  const keys = new Map<string, Buffer>();
  for (const key of [config.encryptionKey, ...config.previousEncryptionKeys])
    keys.set(keyId(key), key);
  const vault = createVault({ keys, currentKeyId: keyId(config.encryptionKey) });

  const internal = createInternalSecretBackend(vault);
  const readBackends: SecretBackend[] = [internal];
  let secrets: SecretBackend = internal;
  if (config.secretBackend === "gcp" && config.gcpProject) {
    const gcp = createGcpSecretBackend({
      project: config.gcpProject,
      prefix: config.secretPrefix,
      clientOptions: endpointOptions(config.secretManagerEndpoint),
    });
    resources.defer(() => gcp.close());
    secrets = gcp;
    readBackends.push(gcp);
  }
  try {
    await secrets.check();
  } catch (error) {
    throw new AtriumError(Code.Unavailable, `secret backend ${secrets.kind} is unreachable`, {
      cause: error,
    });
  }

  const ctx: BrokerContext = {
    sql,
    vault,
    providers: createProviderStore({ sql, secrets, readBackends }),
    oauth: createOAuthClient(),
    states: createStateCodec(config.stateKey),
    instanceId: `${randomUUID()}`,
    logger,
    settings: {
      defaultTokenLifetimeSeconds: config.defaultTokenLifetimeSeconds,
      refreshSkewSeconds: config.refreshSkewSeconds,
      leaseSeconds: config.leaseSeconds,
      revocationTimeoutMs: config.revocationTimeoutMs,
      teardownTimeoutMs: config.teardownTimeoutMs,
      maxRefreshFailures: config.maxRefreshFailures,
      stateTtlSeconds: config.stateTtlSeconds,
      allowedReturnDomains: config.allowedReturnDomains,
      defaultRedirectUri: config.oauthRedirectUri,
    },
  };
  const connections = createConnectionService(ctx);
  const saml = createSamlFlow(ctx, connections, { acsUrl: config.samlAcsUrl });
  const webhooks = createWebhookStore({
    sql,
    vault,
    allowHttpLoopback: config.webhooks.allowHttpLoopback,
  });

  const apiKeys = createApiKeySet({
    keys: config.apiKeys,
    files: config.apiKeyFiles,
    reloadMs: config.apiKeyReloadMs,
    logger,
  });
  try {
    await apiKeys.load();
    if (apiKeys.size() === 0) throw new Error("no API key configured");
  } catch (error) {
    throw new AtriumError(
      Code.FailedPrecondition,
      `API keys could not be loaded: ${(error as Error).message}`,
    );
  }
  apiKeys.start();
  resources.defer(() => apiKeys.stop());

  const host = createServiceHost({
    ...hostSettingsFromEnv(options.env),
    name: "broker",
    logger,
    rest: { host: config.host, port: config.restPort },
    grpc: config.grpcPort === undefined ? undefined : { host: config.host, port: config.grpcPort },
    services: [
      {
        service: brokerV1.BrokerService,
        implementation: createBrokerHandlers({ ctx, connections, saml, webhooks }),
      },
    ],
    authenticator: apiKeyAuthenticator({ keys: apiKeys, wrongKey: Code.Unauthenticated }),
    allowedCidrs: config.allowedCidrs,
    trustedProxies: config.trustedProxies,
    healthChecks: { database: () => sql.ping() },
    configureRest: configureBrokerRest,
  });
  const { restUrl, grpcUrl } = await host.start();
  resources.defer(() => host.stop());

  const refreshLoop = createRefreshLoop(ctx, connections.refresher, {
    intervalMs: config.refreshIntervalMs,
    batchSize: config.refreshBatchSize,
    concurrency: config.refreshConcurrency,
  });
  if (config.refreshLoop) refreshLoop.start();
  resources.defer(() => refreshLoop.stop());

  const webhookWorker = createWebhookWorker({
    sql,
    vault,
    logger,
    instanceId: ctx.instanceId,
    settings: config.webhooks,
  });
  if (config.webhooks.delivery) webhookWorker.start();
  resources.defer(() => webhookWorker.stop());

  logger.info(
    { secretBackend: secrets.kind, apiKeys: apiKeys.size(), rest: restUrl, grpc: grpcUrl },
    "broker ready",
  );
  return {
    name: "broker",
    urls: { rest: restUrl, grpc: grpcUrl },
    refreshLoop,
    webhookWorker,
    stop: resources.close,
  };
}

/** SECRET_MANAGER_ENDPOINT=host:port points the client at a local (plaintext) server. */
function endpointOptions(endpoint: string | undefined) {
  if (!endpoint) return undefined;
  const colon = endpoint.lastIndexOf(":");
  return {
    apiEndpoint: endpoint.slice(0, colon),
    port: Number(endpoint.slice(colon + 1)),
    sslCreds: credentials.createInsecure(),
    // A local server has no universe; skips the metadata-server lookup of default credentials.
    universeDomain: "googleapis.com",
  };
}
