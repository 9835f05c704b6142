import {
  type Cidr,
  ConfigError,
  type Env,
  envBoolean,
  envDuration,
  envPort,
  envUrl,
  loadConfig,
  parseCidrList,
} from "@atrium/kit";
import { z } from "zod";

export interface GatewayConfig {
  host: string;
  restPort: number;
  grpcPort: number;
  brokerUrl: string;
  brokerGrpcUrl: string | undefined;
  brokerApiKey: string;
  brokerTimeoutMs: number;
  requireApiKey: boolean;
  apiKeys: string[];
  apiKeyFiles: string[];
  apiKeyReloadMs: number;
  allowedCidrs: Cidr[];
  trustedProxies: Cidr[];
  allowedReturnDomains: string[];
  /** undefined: any http or https origin (the spec's behaviour, with a start-up warning). */
  corsAllowedOrigins: string[] | undefined;
  publicUrl: string | undefined;
}

/** Lists are separated by commas or newlines (a key file may hold one key per line). */
export const splitList = (value: string | undefined) =>
  (value ?? "")
    .split(/[,\n]/)
    .map((item) => item.trim())
    .filter(Boolean);

const cidrList = z.string().transform((value, ctx) => {
  try {
    return parseCidrList(splitList(value));
  } catch (error) {
    ctx.addIssue({ code: "custom", message: (error as Error).message });
    return z.NEVER;
  }
});

const schema = z.object({
  GATEWAY_HOST: z.string().default("0.0.0.0"),
  GATEWAY_REST_PORT: envPort().default(8082),
  GATEWAY_GRPC_PORT: envPort().default(9092),
  BROKER_URL: envUrl({ protocols: ["http", "https"] }).default(new URL("http://127.0.0.1:8081")),
  BROKER_GRPC_URL: envUrl({ protocols: ["http", "https"] }).optional(),
  BROKER_API_KEY: z.string({ error: "is required: the gateway calls the broker with it" }),
  BROKER_TIMEOUT: envDuration().default(10_000),
  GATEWAY_REQUIRE_API_KEY: envBoolean().default(false),
  GATEWAY_API_KEYS: z.string().optional(),
  GATEWAY_API_KEY_FILE: z.string().optional(),
  GATEWAY_API_KEYS_FILE: z.string().optional(),
  GATEWAY_API_KEY_RELOAD_INTERVAL: envDuration().default(30_000),
  ALLOWED_CIDRS: cidrList.optional(),
  TRUSTED_PROXIES: cidrList.optional(),
  ALLOWED_RETURN_DOMAINS: z.string().optional(),
  CORS_ALLOWED_ORIGINS: z.string().optional(),
  GATEWAY_PUBLIC_URL: envUrl({ protocols: ["http", "https"] }).optional(),
});

/** Validated once at start-up; a bad variable throws ConfigError naming it. */
export function loadGatewayConfig(env: Env): GatewayConfig {
  const values = loadConfig(schema, env);
  const apiKeyFiles = [values.GATEWAY_API_KEY_FILE, values.GATEWAY_API_KEYS_FILE].filter(
    (file): file is string => file !== undefined,
  );
  if (values.GATEWAY_API_KEY_RELOAD_INTERVAL < 100) {
    throw new ConfigError(
      "invalid configuration: GATEWAY_API_KEY_RELOAD_INTERVAL must be at least 100ms",
    );
  }
  return {
    host: values.GATEWAY_HOST,
    restPort: values.GATEWAY_REST_PORT,
    grpcPort: values.GATEWAY_GRPC_PORT,
    brokerUrl: values.BROKER_URL.toString().replace(/\/$/, ""),
    brokerGrpcUrl: values.BROKER_GRPC_URL?.toString().replace(/\/$/, ""),
    brokerApiKey: values.BROKER_API_KEY,
    brokerTimeoutMs: values.BROKER_TIMEOUT,
    requireApiKey: values.GATEWAY_REQUIRE_API_KEY,
    apiKeys: splitList(values.GATEWAY_API_KEYS),
    apiKeyFiles,
    apiKeyReloadMs: values.GATEWAY_API_KEY_RELOAD_INTERVAL,
    allowedCidrs: values.ALLOWED_CIDRS ?? [],
    trustedProxies: values.TRUSTED_PROXIES ?? [],
    allowedReturnDomains: splitList(values.ALLOWED_RETURN_DOMAINS).map((d) => d.toLowerCase()),
    corsAllowedOrigins: values.CORS_ALLOWED_ORIGINS
      ? splitList(values.CORS_ALLOWED_ORIGINS)
      : undefined,
    publicUrl: values.GATEWAY_PUBLIC_URL?.toString().replace(/\/$/, ""),
  };
}
