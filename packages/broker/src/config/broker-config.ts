import {
  type Cidr,
  ConfigError,
  type Env,
  envBoolean,
  envCidrList,
  envInteger,
  envPort,
  envString,
  loadConfig,
  splitEnvList,
} from "@atrium/kit";
import { z } from "zod";
import { decodeKey } from "../vault/key-material.js";

export interface BrokerConfig {
  host: string;
  restPort: number;
  grpcPort: number | undefined;
  encryptionKey: Buffer;
  previousEncryptionKeys: Buffer[];
  stateKey: string;
  apiKeys: string[];
  apiKeyFiles: string[];
  apiKeyReloadMs: number;
  allowedCidrs: Cidr[];
  trustedProxies: Cidr[];
  databaseUrl: string | undefined;
  dataDir: string;
  autoMigrate: boolean;
  migrationsDir: string | undefined;
  secretBackend: "internal" | "gcp";
  secretPrefix: string;
  gcpProject: string | undefined;
  secretManagerEndpoint: string | undefined;
  oauthRedirectUri: string;
  samlAcsUrl: string;
  allowedReturnDomains: string[];
  defaultTokenLifetimeSeconds: number;
  refreshSkewSeconds: number;
  refreshIntervalMs: number;
  refreshBatchSize: number;
  refreshConcurrency: number;
  leaseSeconds: number;
  revocationTimeoutMs: number;
  teardownTimeoutMs: number;
  maxRefreshFailures: number;
  stateTtlSeconds: number;
  refreshLoop: boolean;
  webhooks: WebhookSettings;
}

/** Delivery of the webhook outbox; see docs/webhooks.md. */
export interface WebhookSettings {
  /** Runs the delivery worker in this process (WEBHOOK_DELIVERY). */
  delivery: boolean;
  /** Pause between outbox polls when the last one found nothing due. */
  pollMs: number;
  /** Deadline of one POST, connect to last byte. */
  timeoutMs: number;
  /** First retry delay; each further one is four times longer, capped at 6 h, jittered. */
  retryBaseMs: number;
  /** Age after which a delivery still failing is marked failed. */
  retryWindowSeconds: number;
  /** Deliveries claimed per poll. */
  batchSize: number;
  /** Lets loopback hosts past the private-address checks, with http:// (development, tests). */
  allowHttpLoopback: boolean;
}

/** A 32-byte key, base64 or hex; its value is never echoed. */
const envKey = () =>
  z.string().transform((value, ctx) => {
    const decoded = decodeKey(value);
    if (!decoded) {
      ctx.addIssue({ code: "custom", message: "must be 32 bytes encoded as base64 or hex" });
      return z.NEVER;
    }
    return decoded;
  });

/** Comma- or newline-separated 32-byte keys (the ones before a rotation). */
const envKeyList = () =>
  z.string().transform((value, ctx) => {
    const keys: Buffer[] = [];
    for (const [i, entry] of splitEnvList(value).entries()) {
      const decoded = decodeKey(entry);
      if (!decoded) {
        ctx.addIssue({ code: "custom", message: `entry ${i + 1} must be 32 bytes, base64 or hex` });
        return z.NEVER;
      }
      keys.push(decoded);
    }
    return keys;
  });

const seconds = (fallback: number, min = 1) => envInteger({ min, max: 2 ** 31 }).default(fallback);

const schema = z.object({
  ENCRYPTION_KEY: envKey().optional(),
  ENCRYPTION_KEY_PREVIOUS: envKeyList().default([]),
  STATE_KEY: envString({ minLength: 32 }).optional(),
  API_KEYS: z.string().optional(),
  API_KEY: z.string().optional(),
  API_KEY_FILE: envString().optional(),
  API_KEYS_FILE: envString().optional(),
  API_KEY_RELOAD_INTERVAL_MS: seconds(5_000, 100),
  BROKER_HOST: z.string().default("0.0.0.0"),
  BROKER_REST_PORT: envPort().default(8081),
  BROKER_GRPC_PORT: envPort().default(9091),
  BROKER_GRPC_ENABLED: envBoolean().default(true),
  ALLOWED_CIDRS: envCidrList().default([]),
  TRUSTED_PROXIES: envCidrList().default([]),
  DATABASE_URL: z.string().optional(),
  ATRIUM_DATA_DIR: z.string().default("./data"),
  AUTO_MIGRATE: envBoolean().default(true),
  MIGRATIONS_DIR: z.string().optional(),
  SECRET_BACKEND: z
    .enum(["internal", "gcp"], { error: "must be internal or gcp" })
    .default("internal"),
  SECRET_PREFIX: z.string().default("atrium-broker"),
  GCP_PROJECT: z.string().optional(),
  GOOGLE_CLOUD_PROJECT: z.string().optional(),
  SECRET_MANAGER_ENDPOINT: z.string().optional(),
  OAUTH_REDIRECT_URI: z.string().default("http://localhost:8082/auth/callback"),
  SAML_ACS_URL: z.string().default("http://localhost:8081/saml/acs"),
  ALLOWED_RETURN_DOMAINS: z.string().optional(),
  DEFAULT_TOKEN_LIFETIME_SECONDS: seconds(3600),
  REFRESH_SKEW_SECONDS: seconds(300, 0),
  REFRESH_INTERVAL_MS: seconds(15_000, 10),
  REFRESH_BATCH_SIZE: envInteger({ min: 1, max: 10_000 }).default(100),
  REFRESH_CONCURRENCY: envInteger({ min: 1, max: 1_000 }).default(8),
  REFRESH_LEASE_SECONDS: seconds(60),
  REVOCATION_TIMEOUT_MS: seconds(5_000),
  REVOCATION_TEARDOWN_TIMEOUT_MS: seconds(5_000),
  MAX_REFRESH_FAILURES: seconds(10),
  STATE_TTL_SECONDS: seconds(600),
  REFRESH_LOOP: envBoolean().default(true),
  WEBHOOK_DELIVERY: envBoolean().default(true),
  WEBHOOK_POLL_INTERVAL_MS: seconds(1_000, 10),
  WEBHOOK_TIMEOUT_MS: envInteger({ min: 100, max: 60_000 }).default(10_000),
  WEBHOOK_RETRY_BASE_MS: seconds(5_000),
  WEBHOOK_RETRY_WINDOW_SECONDS: seconds(86_400),
  WEBHOOK_BATCH_SIZE: envInteger({ min: 1, max: 1_000 }).default(50),
  WEBHOOK_ALLOW_HTTP_LOOPBACK: envBoolean().default(false),
});

const required = (message: string) => new ConfigError(`invalid configuration: ${message}`);

/** Reads the broker's environment; throws ConfigError naming the first bad variable. */
export function loadBrokerConfig(env: Env): BrokerConfig {
  const values = loadConfig(schema, env);
  // Checked here rather than in the schema, so that each says what it is for.
  if (values.ENCRYPTION_KEY === undefined) {
    throw required("ENCRYPTION_KEY is required (32 bytes, base64 or hex)");
  }
  if (values.STATE_KEY === undefined) {
    throw required("STATE_KEY is required (at least 32 characters)");
  }
  const apiKeys = [...splitEnvList(values.API_KEYS), ...splitEnvList(values.API_KEY)];
  const apiKeyFiles = [values.API_KEY_FILE, values.API_KEYS_FILE].filter(
    (file): file is string => file !== undefined,
  );
  if (apiKeys.length === 0 && apiKeyFiles.length === 0) {
    throw required("API_KEYS is required (or API_KEY, API_KEY_FILE, API_KEYS_FILE)");
  }
  const gcpProject = values.GCP_PROJECT ?? values.GOOGLE_CLOUD_PROJECT;
  if (values.SECRET_BACKEND === "gcp" && !gcpProject) {
    throw required("GCP_PROJECT is required when SECRET_BACKEND=gcp");
  }
  return {
    host: values.BROKER_HOST.trim(),
    restPort: values.BROKER_REST_PORT,
    grpcPort: values.BROKER_GRPC_ENABLED ? values.BROKER_GRPC_PORT : undefined,
    encryptionKey: values.ENCRYPTION_KEY,
    previousEncryptionKeys: values.ENCRYPTION_KEY_PREVIOUS,
    stateKey: values.STATE_KEY.trim(),
    apiKeys,
    apiKeyFiles,
    apiKeyReloadMs: values.API_KEY_RELOAD_INTERVAL_MS,
    allowedCidrs: values.ALLOWED_CIDRS,
    trustedProxies: values.TRUSTED_PROXIES,
    databaseUrl: values.DATABASE_URL?.trim(),
    dataDir: values.ATRIUM_DATA_DIR.trim(),
    autoMigrate: values.AUTO_MIGRATE,
    migrationsDir: values.MIGRATIONS_DIR?.trim(),
    secretBackend: values.SECRET_BACKEND,
    secretPrefix: values.SECRET_PREFIX.trim(),
    gcpProject: gcpProject?.trim(),
    secretManagerEndpoint: values.SECRET_MANAGER_ENDPOINT?.trim(),
    oauthRedirectUri: values.OAUTH_REDIRECT_URI.trim(),
    samlAcsUrl: values.SAML_ACS_URL.trim(),
    allowedReturnDomains: splitEnvList(values.ALLOWED_RETURN_DOMAINS),
    defaultTokenLifetimeSeconds: values.DEFAULT_TOKEN_LIFETIME_SECONDS,
    refreshSkewSeconds: values.REFRESH_SKEW_SECONDS,
    refreshIntervalMs: values.REFRESH_INTERVAL_MS,
    refreshBatchSize: values.REFRESH_BATCH_SIZE,
    refreshConcurrency: values.REFRESH_CONCURRENCY,
    leaseSeconds: values.REFRESH_LEASE_SECONDS,
    revocationTimeoutMs: values.REVOCATION_TIMEOUT_MS,
    teardownTimeoutMs: values.REVOCATION_TEARDOWN_TIMEOUT_MS,
    maxRefreshFailures: values.MAX_REFRESH_FAILURES,
    stateTtlSeconds: values.STATE_TTL_SECONDS,
    refreshLoop: values.REFRESH_LOOP,
    webhooks: {
      delivery: values.WEBHOOK_DELIVERY,
      pollMs: values.WEBHOOK_POLL_INTERVAL_MS,
      timeoutMs: values.WEBHOOK_TIMEOUT_MS,
      retryBaseMs: values.WEBHOOK_RETRY_BASE_MS,
      retryWindowSeconds: values.WEBHOOK_RETRY_WINDOW_SECONDS,
      batchSize: values.WEBHOOK_BATCH_SIZE,
      allowHttpLoopback: values.WEBHOOK_ALLOW_HTTP_LOOPBACK,
    },
  };
}
