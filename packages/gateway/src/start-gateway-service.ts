import { randomBytes } from "node:crypto";
import { gatewayV1 } from "@atrium/api";
import {
  ConfigError,
  createLogger,
  createServiceHost,
  type Env,
  type Logger,
  shutdownGraceMs,
} from "@atrium/kit";
import type { DescService } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { createApiKeyStore } from "./access/api-key-store.js";
import { createCorsPolicy } from "./access/cors.js";
import { exemptPaths, guardWithApiKeys, keyRejection } from "./access/key-guard.js";
import { createBrokerClient } from "./broker/broker-client.js";
import { loadGatewayConfig } from "./config/gateway-config.js";
import { configureMcpRoute, loadScopes, mcpOAuthPaths } from "./mcp/mcp-route.js";
import { createBrokerMetrics } from "./service/broker-metrics.js";
import { configureConsoleRoute, consolePrefix, isConsolePath } from "./service/console-route.js";
import { createGatewayHandlers } from "./service/gateway-handlers.js";
import { configureGatewayRest } from "./service/gateway-rest.js";

export interface StartGatewayServiceOptions {
  env: Env;
  logger?: Logger;
}

export interface GatewayService {
  name: string;
  urls: { rest: string; grpc?: string };
  /** Which transport carried the last broker call (tests, benchmarks). */
  brokerTransport(): "grpc" | "rest";
  stop(): Promise<void>;
}

/**
 * Starts the gateway: the public /v1 API (REST and gRPC from proto/gateway/v1) in front of the
 * broker. Configuration problems throw ConfigError with one line naming the variable.
 */
export async function startGatewayService(
  options: StartGatewayServiceOptions,
): Promise<GatewayService> {
  const config = loadGatewayConfig(options.env);
  const logger = options.logger ?? createLogger({ name: "gateway" });

  // Only for OAuth callers of /mcp: their in-process SDK client needs a key for /v1 (see
  // McpRouteOptions.internalKey). Random per process, held only in memory.
  const internalKey = config.mcp?.oauth ? randomBytes(32).toString("base64url") : undefined;
  const keys = createApiKeyStore({
    keys: internalKey ? [...config.apiKeys, internalKey] : config.apiKeys,
    files: config.apiKeyFiles,
    reloadMs: config.apiKeyReloadMs,
    onReloadError: (file) =>
      logger.warn({ file }, "API key file could not be re-read; keeping its previous keys"),
  });
  if (config.requireApiKey) {
    try {
      await keys.load();
    } catch (error) {
      throw new ConfigError(
        `invalid configuration: GATEWAY_API_KEY_FILE(S) could not be read: ${(error as Error).message}`,
      );
    }
    if (keys.size() === (internalKey ? 1 : 0)) {
      throw new ConfigError(
        "invalid configuration: GATEWAY_REQUIRE_API_KEY=true but no key is configured (GATEWAY_API_KEYS, GATEWAY_API_KEY_FILE, GATEWAY_API_KEYS_FILE)",
      );
    }
  } else {
    logger.warn(
      "inbound API keys are off: any caller that reaches the gateway can read tokens (set GATEWAY_REQUIRE_API_KEY=true)",
    );
  }
  if (config.corsAllowedOrigins === undefined) {
    logger.warn(
      "CORS_ALLOWED_ORIGINS is not set: any http or https origin may call the gateway from a browser",
    );
  }

  let scopes: Awaited<ReturnType<typeof loadScopes>> | undefined;
  if (config.mcp) {
    try {
      scopes = await loadScopes(config.mcp);
    } catch (error) {
      throw new ConfigError(
        `invalid configuration: GATEWAY_MCP_SCOPES: ${(error as Error).message}`,
      );
    }
  }

  const brokerMetrics = createBrokerMetrics();
  const broker = createBrokerClient({
    restUrl: config.brokerUrl,
    grpcUrl: config.brokerGrpcUrl,
    apiKey: config.brokerApiKey,
    timeoutMs: config.brokerTimeoutMs,
    onFallback: (method, error) => {
      brokerMetrics.fellBack(method);
      logger.warn(
        { method, reason: (error as Error).message },
        "broker gRPC unreachable; using REST",
      );
    },
    onAnswered: brokerMetrics.answered,
  });
  const handlers = createGatewayHandlers({
    broker: broker.client,
    allowedReturnDomains: config.allowedReturnDomains,
    publicUrl: config.publicUrl,
    inboundKeysRequired: config.requireApiKey,
  });
  const implementation = config.requireApiKey
    ? guardWithApiKeys(gatewayV1.GatewayService, handlers, {
        keys,
        onRejected: (method, verdict) =>
          logger.warn({ method, mechanism: "api_key", verdict }, "authentication rejected"),
      })
    : handlers;

  let consoleServed = false;
  const host = createServiceHost({
    shutdownGraceMs: shutdownGraceMs(options.env),
    name: "gateway",
    logger,
    rest: { host: config.host, port: config.restPort },
    grpc: { host: config.host, port: config.grpcPort },
    // The host resolves the caller (X-Forwarded-For through trusted proxies) and refuses
    // addresses outside ALLOWED_CIDRS on both transports, before the API key check.
    allowedCidrs: config.allowedCidrs,
    trustedProxies: config.trustedProxies,
    services: [
      {
        service: gatewayV1.GatewayService,
        // The host takes services of any descriptor; the typed implementation is checked above.
        implementation: implementation as unknown as Partial<ServiceImpl<DescService>>,
      },
    ],
    configureRest: async (app) => {
      configureGatewayRest(app, {
        cors: createCorsPolicy(config.corsAllowedOrigins),
        checkApiKey: config.requireApiKey
          ? (presented, path) => {
              if (exemptPaths.has(path) || isConsolePath(path)) return;
              if (config.mcp?.oauth && mcpOAuthPaths.includes(path)) return;
              const verdict = keys.check(presented);
              const rejection = keyRejection(verdict);
              if (!rejection) return;
              logger.warn({ path, mechanism: "api_key", verdict }, "authentication rejected");
              throw rejection;
            }
          : undefined,
      });
      if (config.mcp && scopes) {
        configureMcpRoute(app, scopes, {
          config: config.mcp,
          broker: broker.client,
          logger,
          keys,
          oauth:
            config.mcp.oauth && internalKey
              ? { internalKey, publicOrigin: new URL(config.mcp.oauth.resource).origin }
              : undefined,
        });
      }
      consoleServed = await configureConsoleRoute(app);
    },
  });
  brokerMetrics.register(host.metrics);
  try {
    const { restUrl, grpcUrl } = await host.start();
    if (config.requireApiKey) keys.start();
    logger.info(
      {
        rest: restUrl,
        grpc: grpcUrl,
        broker: config.brokerGrpcUrl ?? config.brokerUrl,
        inboundKeys: config.requireApiKey,
        mcp: scopes ? `${restUrl}/mcp (${scopes.size()} scoped keys)` : "off",
        console: consoleServed ? `${restUrl}${consolePrefix}/` : "not built (make build)",
      },
      "gateway ready",
    );
    let stopping: Promise<void> | undefined;
    return {
      name: "gateway",
      urls: { rest: restUrl, grpc: grpcUrl },
      brokerTransport: broker.lastTransport,
      stop() {
        stopping ??= (async () => {
          keys.stop();
          await host.stop();
          broker.close();
        })();
        return stopping;
      },
    };
  } catch (error) {
    await host.stop();
    broker.close();
    throw error;
  }
}
