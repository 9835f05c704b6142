import { resolve } from "node:path";
import {
  ConfigError,
  type Env,
  envBoolean,
  envDuration,
  envInteger,
  envPort,
  envString,
  envUrl,
  loadConfig,
  webhookSecretKey,
} from "@atrium/kit";
import { z } from "zod";
import type { LlmConfig, LlmTier } from "../llm/llm-client.js";
import type { StepWebhookSettings } from "../webhooks/step-webhook-worker.js";

const schema = z.object({
  AGENT_HOST: envString().default("0.0.0.0"),
  AGENT_PORT: envPort().default(8000),
  AGENT_ALLOW_UNAUTHENTICATED: envBoolean().default(false),
  ATRIUM_DATA_DIR: envString().default("./data"),
  REDIS_URL: envUrl({ protocols: ["redis", "rediss"] }).optional(),
  TRACES_DIR: envString().optional(),
  DATABASE_URL: envUrl({ protocols: ["postgres", "postgresql"] }).optional(),
  AUTO_MIGRATE: envBoolean().default(true),
  TRACE_RETENTION: envDuration().default(7 * 86_400_000),
  TRACE_LOG_CAPACITY: envInteger({ min: 1, max: 1_000_000 }).default(10_000),
  CHAT_STREAM_TIMEOUT: envDuration().default(300_000),
  CHAT_HEARTBEAT_INTERVAL: envDuration().default(15_000),
  CHAT_WEBHOOK_URL: envUrl({ protocols: ["http", "https"] }).optional(),
  CHAT_WEBHOOK_SECRET: envString().optional(),
  CHAT_WEBHOOK_TIMEOUT: envDuration().default(10_000),
  CHAT_WEBHOOK_RETRY_BASE: envDuration().default(5_000),
  CHAT_WEBHOOK_RETRY_WINDOW: envDuration().default(86_400_000),
  CHAT_WEBHOOK_POLL_INTERVAL: envDuration().default(1_000),
  LLM_BASE_URL: envUrl({ protocols: ["http", "https"] }).optional(),
  LLM_API_KEY: envString().optional(),
  LLM_MODEL: envString().default("gpt-4o-mini"),
  LLM_MODEL_ROUTER: envString().optional(),
  LLM_MODEL_RESEARCHER: envString().optional(),
  LLM_MODEL_CODER: envString().optional(),
  LLM_MODEL_BROWSER: envString().optional(),
  LLM_MODEL_COMMUNICATOR: envString().optional(),
  LLM_TIMEOUT: envDuration().default(120_000),
  LLM_MAX_RETRIES: envInteger({ min: 0, max: 10 }).default(2),
  MEMORY_GRPC_URL: envUrl({ protocols: ["http", "https"] }).optional(),
  MEMORY_URL: envUrl({ protocols: ["http", "https"] }).optional(),
  MEMORY_API_KEY: envString().optional(),
  ATRIUM_MEMORY_API_KEY: envString().optional(),
  AGENT_ALLOWED_HOSTS: z.string().default(""),
  CHROMIUM_PATH: envString().optional(),
  COMMUNICATOR_WEBHOOK_URL: envUrl({ protocols: ["http", "https"] }).optional(),
  COMMUNICATOR_REQUIRE_APPROVAL: envBoolean().default(true),
  COMMUNICATOR_CONNECTION_ID: envString().optional(),
  COMMUNICATOR_SEND_URL: envUrl({ protocols: ["http", "https"] }).optional(),
  GATEWAY_URL: envUrl({ protocols: ["http", "https"] }).optional(),
  GATEWAY_API_KEY: envString().optional(),
  CONSENT_POLL_INTERVAL: envDuration().default(2000),
  SANDBOX_TIMEOUT: envDuration().default(5000),
  SANDBOX_MEMORY_MB: envInteger({ min: 8, max: 4096 }).default(64),
});

export interface AgentConfig {
  host: string;
  port: number;
  /** Listen beyond loopback even with no caller authentication configured. */
  allowUnauthenticated: boolean;
  redisUrl?: string;
  tracesDir: string;
  /** Trace history goes to this PostgreSQL database, shared by every host, instead of tracesDir. */
  databaseUrl?: string;
  autoMigrate: boolean;
  traceRetentionSeconds: number;
  traceLogCapacity: number;
  streamTimeoutMs: number;
  heartbeatMs: number;
  /** Where step events (chat.step.*) are sent, signed; absent, none is recorded. */
  stepWebhooks?: StepWebhookSettings;
  llm?: LlmConfig;
  memory?: { url: string; apiKey?: string };
  allowedHosts: string[];
  chromiumPath?: string;
  webhookUrl?: string;
  requireSendApproval: boolean;
  gateway?: { url: string; apiKey?: string };
  /** How often yielded consent steps look whether their connection became active. */
  consentPollMs: number;
  sendConnectionId?: string;
  sendUrl?: string;
  sandbox: { timeoutMs: number; memoryMb: number };
}

/** Reads the agent host's environment; a bad value throws ConfigError naming the variable. */
export function loadAgentConfig(env: Env): AgentConfig {
  const c = loadConfig(schema, env);
  const tiers: Partial<Record<LlmTier, string>> = {};
  if (c.LLM_MODEL_ROUTER) tiers.router = c.LLM_MODEL_ROUTER;
  if (c.LLM_MODEL_RESEARCHER) tiers.researcher = c.LLM_MODEL_RESEARCHER;
  if (c.LLM_MODEL_CODER) tiers.coder = c.LLM_MODEL_CODER;
  if (c.LLM_MODEL_BROWSER) tiers.browser = c.LLM_MODEL_BROWSER;
  if (c.LLM_MODEL_COMMUNICATOR) tiers.communicator = c.LLM_MODEL_COMMUNICATOR;
  // The memory client speaks gRPC; MEMORY_URL is accepted when it names that endpoint.
  const memoryUrl = c.MEMORY_GRPC_URL ?? c.MEMORY_URL;
  let stepWebhooks: StepWebhookSettings | undefined;
  if (c.CHAT_WEBHOOK_URL) {
    if (!c.CHAT_WEBHOOK_SECRET) {
      throw new ConfigError("invalid configuration: CHAT_WEBHOOK_URL needs CHAT_WEBHOOK_SECRET");
    }
    const key = webhookSecretKey(c.CHAT_WEBHOOK_SECRET);
    if (!key) {
      throw new ConfigError(
        "invalid configuration: CHAT_WEBHOOK_SECRET must be whsec_ and the base64 of 24 to 64 bytes",
      );
    }
    stepWebhooks = {
      url: c.CHAT_WEBHOOK_URL.toString(),
      key,
      pollMs: c.CHAT_WEBHOOK_POLL_INTERVAL,
      timeoutMs: c.CHAT_WEBHOOK_TIMEOUT,
      retryBaseMs: c.CHAT_WEBHOOK_RETRY_BASE,
      retryWindowMs: c.CHAT_WEBHOOK_RETRY_WINDOW,
    };
  }
  return {
    host: c.AGENT_HOST,
    port: c.AGENT_PORT,
    allowUnauthenticated: c.AGENT_ALLOW_UNAUTHENTICATED,
    redisUrl: c.REDIS_URL?.toString(),
    tracesDir: resolve(c.TRACES_DIR ?? resolve(c.ATRIUM_DATA_DIR, "traces")),
    databaseUrl: c.DATABASE_URL?.toString(),
    autoMigrate: c.AUTO_MIGRATE,
    traceRetentionSeconds: Math.max(1, Math.round(c.TRACE_RETENTION / 1000)),
    traceLogCapacity: c.TRACE_LOG_CAPACITY,
    streamTimeoutMs: c.CHAT_STREAM_TIMEOUT,
    heartbeatMs: Math.min(c.CHAT_HEARTBEAT_INTERVAL, 15_000),
    stepWebhooks,
    llm: c.LLM_BASE_URL
      ? {
          baseUrl: c.LLM_BASE_URL.toString(),
          apiKey: c.LLM_API_KEY,
          model: c.LLM_MODEL,
          tierModels: tiers,
          timeoutMs: c.LLM_TIMEOUT,
          maxRetries: c.LLM_MAX_RETRIES,
        }
      : undefined,
    memory: memoryUrl
      ? { url: memoryUrl.toString(), apiKey: c.MEMORY_API_KEY ?? c.ATRIUM_MEMORY_API_KEY }
      : undefined,
    allowedHosts: c.AGENT_ALLOWED_HOSTS.split(",")
      .map((h) => h.trim())
      .filter(Boolean),
    chromiumPath: c.CHROMIUM_PATH,
    webhookUrl: c.COMMUNICATOR_WEBHOOK_URL?.toString(),
    requireSendApproval: c.COMMUNICATOR_REQUIRE_APPROVAL,
    gateway: c.GATEWAY_URL
      ? { url: c.GATEWAY_URL.toString(), apiKey: c.GATEWAY_API_KEY }
      : undefined,
    consentPollMs: c.CONSENT_POLL_INTERVAL,
    sendConnectionId: c.COMMUNICATOR_CONNECTION_ID,
    sendUrl: c.COMMUNICATOR_SEND_URL?.toString(),
    sandbox: { timeoutMs: c.SANDBOX_TIMEOUT, memoryMb: c.SANDBOX_MEMORY_MB },
  };
}
