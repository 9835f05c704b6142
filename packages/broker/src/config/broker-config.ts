import { type Cidr, parseCidrList } from "@atrium/kit";
import { decodeKey } from "../vault/key-material.js";

/** One line naming the variable; never the value of a secret. */
export class BrokerConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BrokerConfigError";
  }
}

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
  /** Allows http:// subscription URLs on loopback hosts (development, tests). */
  allowHttpLoopback: boolean;
}

type Env = Record<string, string | undefined>;

const list = (value: string | undefined) =>
  (value ?? "")
    .split(/[,\n]/)
    .map((s) => s.trim())
    .filter(Boolean);

function integer(env: Env, name: string, fallback: number, min = 0, max = 2 ** 31): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < min || value > max) {
    throw new BrokerConfigError(`${name} must be an integer from ${min} to ${max} (got "${raw}")`);
  }
  return value;
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (!raw) return fallback;
  if (["true", "1"].includes(raw)) return true;
  if (["false", "0"].includes(raw)) return false;
  throw new BrokerConfigError(`${name} must be true or false (got "${raw}")`);
}

function key(env: Env, name: string): Buffer {
  const raw = env[name];
  if (!raw?.trim()) throw new BrokerConfigError(`${name} is required (32 bytes, base64 or hex)`);
  const decoded = decodeKey(raw);
  if (!decoded) throw new BrokerConfigError(`${name} must be 32 bytes encoded as base64 or hex`);
  return decoded;
}

/** Reads the broker's environment; throws BrokerConfigError for the first problem found. */
export function loadBrokerConfig(env: Env): BrokerConfig {
  const encryptionKey = key(env, "ENCRYPTION_KEY");
  const previousEncryptionKeys = list(env.ENCRYPTION_KEY_PREVIOUS).map((value, i) => {
    const decoded = decodeKey(value);
    if (!decoded) {
      throw new BrokerConfigError(
        `ENCRYPTION_KEY_PREVIOUS entry ${i + 1} must be 32 bytes, base64 or hex`,
      );
    }
    return decoded;
  });
  const stateKey = env.STATE_KEY?.trim() ?? "";
  if (!stateKey) throw new BrokerConfigError("STATE_KEY is required (at least 32 characters)");
  if (stateKey.length < 32) throw new BrokerConfigError("STATE_KEY must be at least 32 characters");

  const apiKeys = [...list(env.API_KEYS), ...list(env.API_KEY)];
  const apiKeyFiles = [env.API_KEY_FILE, env.API_KEYS_FILE].filter((f): f is string =>
    Boolean(f?.trim()),
  );
  if (apiKeys.length === 0 && apiKeyFiles.length === 0) {
    throw new BrokerConfigError("API_KEYS is required (or API_KEY, API_KEY_FILE, API_KEYS_FILE)");
  }

  const secretBackend = (env.SECRET_BACKEND?.trim() || "internal") as BrokerConfig["secretBackend"];
  if (secretBackend !== "internal" && secretBackend !== "gcp") {
    throw new BrokerConfigError(
      `SECRET_BACKEND must be internal or gcp (got "${env.SECRET_BACKEND}")`,
    );
  }
  const gcpProject = env.GCP_PROJECT?.trim() || env.GOOGLE_CLOUD_PROJECT?.trim() || undefined;
  if (secretBackend === "gcp" && !gcpProject) {
    throw new BrokerConfigError("GCP_PROJECT is required when SECRET_BACKEND=gcp");
  }

  const cidrs = (name: string) => {
    try {
      return parseCidrList(list(env[name]));
    } catch (error) {
      throw new BrokerConfigError(`${name}: ${(error as Error).message}`);
    }
  };

  const grpcPort = integer(env, "BROKER_GRPC_PORT", 9091, 0, 65535);
  return {
    host: env.BROKER_HOST?.trim() || "0.0.0.0",
    restPort: integer(env, "BROKER_REST_PORT", 8081, 0, 65535),
    grpcPort: boolean(env, "BROKER_GRPC_ENABLED", true) ? grpcPort : undefined,
    encryptionKey,
    previousEncryptionKeys,
    stateKey,
    apiKeys,
    apiKeyFiles,
    apiKeyReloadMs: integer(env, "API_KEY_RELOAD_INTERVAL_MS", 5_000, 100),
    allowedCidrs: cidrs("ALLOWED_CIDRS"),
    trustedProxies: cidrs("TRUSTED_PROXIES"),
    databaseUrl: env.DATABASE_URL?.trim() || undefined,
    dataDir: env.ATRIUM_DATA_DIR?.trim() || "./data",
    autoMigrate: boolean(env, "AUTO_MIGRATE", true),
    migrationsDir: env.MIGRATIONS_DIR?.trim() || undefined,
    secretBackend,
    secretPrefix: env.SECRET_PREFIX?.trim() || "atrium-broker",
    gcpProject,
    secretManagerEndpoint: env.SECRET_MANAGER_ENDPOINT?.trim() || undefined,
    oauthRedirectUri: env.OAUTH_REDIRECT_URI?.trim() || "http://localhost:8082/auth/callback",
    samlAcsUrl: env.SAML_ACS_URL?.trim() || "http://localhost:8081/saml/acs",
    allowedReturnDomains: list(env.ALLOWED_RETURN_DOMAINS),
    defaultTokenLifetimeSeconds: integer(env, "DEFAULT_TOKEN_LIFETIME_SECONDS", 3600, 1),
    refreshSkewSeconds: integer(env, "REFRESH_SKEW_SECONDS", 300),
    refreshIntervalMs: integer(env, "REFRESH_INTERVAL_MS", 15_000, 10),
    refreshBatchSize: integer(env, "REFRESH_BATCH_SIZE", 100, 1, 10_000),
    refreshConcurrency: integer(env, "REFRESH_CONCURRENCY", 8, 1, 1_000),
    leaseSeconds: integer(env, "REFRESH_LEASE_SECONDS", 60, 1),
    revocationTimeoutMs: integer(env, "REVOCATION_TIMEOUT_MS", 5_000, 1),
    teardownTimeoutMs: integer(env, "REVOCATION_TEARDOWN_TIMEOUT_MS", 5_000, 1),
    maxRefreshFailures: integer(env, "MAX_REFRESH_FAILURES", 10, 1),
    stateTtlSeconds: integer(env, "STATE_TTL_SECONDS", 600, 1),
    refreshLoop: boolean(env, "REFRESH_LOOP", true),
    webhooks: {
      delivery: boolean(env, "WEBHOOK_DELIVERY", true),
      pollMs: integer(env, "WEBHOOK_POLL_INTERVAL_MS", 1_000, 10),
      timeoutMs: integer(env, "WEBHOOK_TIMEOUT_MS", 10_000, 100, 60_000),
      retryBaseMs: integer(env, "WEBHOOK_RETRY_BASE_MS", 5_000, 1),
      retryWindowSeconds: integer(env, "WEBHOOK_RETRY_WINDOW_SECONDS", 86_400, 1),
      batchSize: integer(env, "WEBHOOK_BATCH_SIZE", 50, 1, 1_000),
      allowHttpLoopback: boolean(env, "WEBHOOK_ALLOW_HTTP_LOOPBACK", false),
    },
  };
}
