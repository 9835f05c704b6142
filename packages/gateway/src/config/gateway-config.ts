import {
  type Cidr,
  ConfigError,
  type Env,
  envBoolean,
  envCidrList,
  envDuration,
  envInteger,
  envPort,
  envString,
  envUrl,
  loadConfig,
  splitEnvList,
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
  /** The memory service (MEMORY_URL, MEMORY_API_KEY): MCP's tools and the console's memory view. */
  memory: { url: string; apiKey: string | undefined };
  /** The agent host's chat router (AGENT_CHAT_URL, AGENT_API_KEY): MCP's ask and the console's traces. */
  chat: { url: string; apiKey: string | undefined };
  /** The MCP endpoint at /mcp; undefined when no key has an MCP scope. */
  mcp: McpConfig | undefined;
}

export interface McpConfig {
  /** JSON scope list (GATEWAY_MCP_SCOPES) or the file holding it (GATEWAY_MCP_SCOPES_FILE). */
  scopes: { json: string } | { file: string };
  memoryUrl: string;
  memoryApiKey: string | undefined;
  /** Where the agent host mounted the chat router. */
  chatUrl: string;
  chatApiKey: string | undefined;
  httpTimeoutMs: number;
  httpMaxBytes: number;
  /** OAuth access tokens of an external authorization server on /mcp, beside API keys. */
  oauth: McpOAuthConfig | undefined;
  /** MCP_ALLOWED_ORIGINS: browser origins beside the gateway's own that may call /mcp. */
  allowedOrigins: string[];
  /** GATEWAY_PUBLIC_URL's origin, always allowed on /mcp (the console is served there). */
  publicOrigin: string | undefined;
}

export interface McpOAuthConfig {
  /** The authorization server (`iss` of its tokens), listed in the resource metadata. */
  issuer: string;
  /** Where its signing keys are published (RS256, ES256). */
  jwksUrl: string;
  /** This endpoint's canonical URL: tokens must carry it as their audience (RFC 8707). */
  resource: string;
}

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
  ALLOWED_CIDRS: envCidrList().optional(),
  TRUSTED_PROXIES: envCidrList().optional(),
  ALLOWED_RETURN_DOMAINS: z.string().optional(),
  CORS_ALLOWED_ORIGINS: z.string().optional(),
  GATEWAY_PUBLIC_URL: envUrl({ protocols: ["http", "https"] }).optional(),
  GATEWAY_MCP_SCOPES: envString().optional(),
  GATEWAY_MCP_SCOPES_FILE: envString().optional(),
  MEMORY_URL: envUrl({ protocols: ["http", "https"] }).default(new URL("http://127.0.0.1:8080")),
  MEMORY_API_KEY: envString().optional(),
  AGENT_CHAT_URL: envUrl({ protocols: ["http", "https"] }).default(
    new URL("http://127.0.0.1:8000/api/v1"),
  ),
  AGENT_API_KEY: envString().optional(),
  MCP_HTTP_TIMEOUT: envDuration().default(30_000),
  MCP_HTTP_MAX_BYTES: envInteger({ min: 1024, max: 64 * 1024 * 1024 }).default(1024 * 1024),
  MCP_ALLOWED_ORIGINS: z.string().optional(),
  GATEWAY_MCP_OAUTH_ISSUER: envUrl({ protocols: ["http", "https"] }).optional(),
  GATEWAY_MCP_OAUTH_JWKS_URL: envUrl({ protocols: ["http", "https"] }).optional(),
  GATEWAY_MCP_RESOURCE: envUrl({ protocols: ["http", "https"] }).optional(),
});

function mcpOAuthConfig(values: z.infer<typeof schema>): McpOAuthConfig | undefined {
  const issuer = values.GATEWAY_MCP_OAUTH_ISSUER;
  if (issuer === undefined) {
    if (values.GATEWAY_MCP_OAUTH_JWKS_URL !== undefined) {
      throw new ConfigError(
        "invalid configuration: GATEWAY_MCP_OAUTH_JWKS_URL needs GATEWAY_MCP_OAUTH_ISSUER",
      );
    }
    return undefined;
  }
  if (values.GATEWAY_MCP_OAUTH_JWKS_URL === undefined) {
    throw new ConfigError(
      "invalid configuration: GATEWAY_MCP_OAUTH_ISSUER needs GATEWAY_MCP_OAUTH_JWKS_URL (where the issuer publishes its signing keys)",
    );
  }
  const resource =
    values.GATEWAY_MCP_RESOURCE?.toString() ??
    (values.GATEWAY_PUBLIC_URL ? `${values.GATEWAY_PUBLIC_URL.origin}/mcp` : undefined);
  if (resource === undefined) {
    throw new ConfigError(
      "invalid configuration: GATEWAY_MCP_OAUTH_ISSUER needs GATEWAY_MCP_RESOURCE (or GATEWAY_PUBLIC_URL): the /mcp URL tokens must be issued for",
    );
  }
  return {
    // An issuer is compared as a string: the slash the URL parser adds to a bare origin is not
    // part of what the authorization server puts in `iss`.
    issuer: issuer.pathname === "/" ? issuer.origin : issuer.href,
    jwksUrl: values.GATEWAY_MCP_OAUTH_JWKS_URL.toString(),
    resource,
  };
}

function mcpConfig(values: z.infer<typeof schema>): McpConfig | undefined {
  const json = values.GATEWAY_MCP_SCOPES;
  const file = values.GATEWAY_MCP_SCOPES_FILE;
  if (json === undefined && file === undefined) return undefined;
  if (json !== undefined && file !== undefined) {
    throw new ConfigError(
      "invalid configuration: set GATEWAY_MCP_SCOPES or GATEWAY_MCP_SCOPES_FILE, not both",
    );
  }
  // An MCP caller's identity is its key's scope: without inbound keys there is none.
  if (!values.GATEWAY_REQUIRE_API_KEY) {
    throw new ConfigError(
      "invalid configuration: GATEWAY_MCP_SCOPES needs GATEWAY_REQUIRE_API_KEY=true (an MCP scope belongs to a key)",
    );
  }
  return {
    scopes: json !== undefined ? { json } : { file: file as string },
    memoryUrl: values.MEMORY_URL.toString().replace(/\/$/, ""),
    memoryApiKey: values.MEMORY_API_KEY,
    chatUrl: values.AGENT_CHAT_URL.toString().replace(/\/$/, ""),
    chatApiKey: values.AGENT_API_KEY,
    httpTimeoutMs: values.MCP_HTTP_TIMEOUT,
    httpMaxBytes: values.MCP_HTTP_MAX_BYTES,
    oauth: mcpOAuthConfig(values),
    allowedOrigins: splitEnvList(values.MCP_ALLOWED_ORIGINS),
    publicOrigin: values.GATEWAY_PUBLIC_URL?.origin,
  };
}

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
    apiKeys: splitEnvList(values.GATEWAY_API_KEYS),
    apiKeyFiles,
    apiKeyReloadMs: values.GATEWAY_API_KEY_RELOAD_INTERVAL,
    allowedCidrs: values.ALLOWED_CIDRS ?? [],
    trustedProxies: values.TRUSTED_PROXIES ?? [],
    allowedReturnDomains: splitEnvList(values.ALLOWED_RETURN_DOMAINS).map((d) => d.toLowerCase()),
    corsAllowedOrigins: values.CORS_ALLOWED_ORIGINS
      ? splitEnvList(values.CORS_ALLOWED_ORIGINS)
      : undefined,
    publicUrl: values.GATEWAY_PUBLIC_URL?.toString().replace(/\/$/, ""),
    memory: { url: values.MEMORY_URL.toString().replace(/\/$/, ""), apiKey: values.MEMORY_API_KEY },
    chat: {
      url: values.AGENT_CHAT_URL.toString().replace(/\/$/, ""),
      apiKey: values.AGENT_API_KEY,
    },
    mcp: mcpConfig(values),
  };
}
