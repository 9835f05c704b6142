import { gatewayV1 } from "@atrium/api";
import {
  type ApiKeySet,
  ConfigError,
  createApiKeySet,
  createLogger,
  createServiceHost,
  type Env,
  hostSettingsFromEnv,
  type Logger,
  logLevel,
  type ResourceStack,
  type RunningService,
  startService,
} from "@atrium/kit";
import type { ScopeDirectory } from "@atrium/mcp";
import type { DescService } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { createCorsPolicy } from "../access/cors.js";
import { createGatewayKeyCheck } from "../access/key-guard.js";
import { createBrokerClient } from "../broker/broker-client.js";
import { type GatewayConfig, loadGatewayConfig } from "../config/gateway-config.js";
import { configureMcpRoute, loadScopes, mcpOAuthChecksItself } from "../mcp/mcp-route.js";
import { createBrokerMetrics } from "./broker-metrics.js";
import { configureConsoleRoute, consolePaths, consolePrefix } from "./console-route.js";
import { createGatewayHandlers } from "./gateway-handlers.js";
import { configureGatewayRest } from "./gateway-rest.js";
import { configureOperatorRoutes } from "./operator-routes.js";

export interface StartGatewayServiceOptions {
  env: Env;
  logger?: Logger;
}

export interface GatewayService extends RunningService {
  /** Which transport carried the last broker call (tests, benchmarks). */
  brokerTransport(): "grpc" | "rest";
}

/**
 * Starts the gateway: the public /v1 API (REST and gRPC from proto/gateway/v1) in front of the
 * broker. Configuration problems throw ConfigError with one line naming the variable.
 */
export async function startGatewayService(
  options: StartGatewayServiceOptions,
): Promise<GatewayService> {
  const config = loadGatewayConfig(options.env);
  const logger = options.logger ?? createLogger({ name: "gateway", level: logLevel(options.env) });

  const keys = createApiKeySet({
    keys: config.apiKeys,
    files: config.apiKeyFiles,
    reloadMs: config.apiKeyReloadMs,
    logger,
  });
  if (config.requireApiKey) {
    try {
      await keys.load();
    } catch (error) {
      throw new ConfigError(
        `invalid configuration: GATEWAY_API_KEY_FILE(S) could not be read: ${(error as Error).message}`,
      );
    }
    if (keys.size() === 0) {
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

  let scopes: ScopeDirectory | undefined;
  if (config.mcp) {
    try {
      scopes = await loadScopes(config.mcp);
    } catch (error) {
      throw new ConfigError(
        `invalid configuration: GATEWAY_MCP_SCOPES: ${(error as Error).message}`,
      );
    }
  }

  return startService(logger, (resources) =>
    serve(config, logger, options, { keys, scopes }, resources),
  );
}

async function serve(
  config: GatewayConfig,
  logger: Logger,
  options: StartGatewayServiceOptions,
  { keys, scopes }: { keys: ApiKeySet; scopes?: ScopeDirectory },
  resources: ResourceStack,
): Promise<GatewayService> {
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
  resources.defer(() => broker.close());
  const handlers = createGatewayHandlers({
    broker: broker.client,
    allowedReturnDomains: config.allowedReturnDomains,
    publicUrl: config.publicUrl,
    inboundKeysRequired: config.requireApiKey,
  });

  let consoleServed = false;
  const host = createServiceHost({
    ...hostSettingsFromEnv(options.env),
    name: "gateway",
    logger,
    rest: { host: config.host, port: config.restPort },
    grpc: { host: config.host, port: config.grpcPort },
    // The host resolves the caller (X-Forwarded-For through trusted proxies) and refuses
    // addresses outside ALLOWED_CIDRS on both transports, before the API key check.
    allowedCidrs: config.allowedCidrs,
    trustedProxies: config.trustedProxies,
    // The one key check, once per request on both transports (the host logs each refusal).
    authenticator: config.requireApiKey
      ? createGatewayKeyCheck({
          keys,
          openPaths: consolePaths,
          checkedElsewhere: config.mcp?.oauth ? mcpOAuthChecksItself : undefined,
        })
      : undefined,
    services: [
      {
        service: gatewayV1.GatewayService,
        // The host takes services of any descriptor; the typed implementation is checked above.
        implementation: handlers as unknown as Partial<ServiceImpl<DescService>>,
      },
    ],
    configureRest: async (app) => {
      configureGatewayRest(app, { cors: createCorsPolicy(config.corsAllowedOrigins) });
      if (config.mcp && scopes) {
        configureMcpRoute(app, scopes, {
          config: config.mcp,
          broker: broker.client,
          handlers,
          logger,
          oauth: config.mcp.oauth
            ? { publicOrigin: new URL(config.mcp.oauth.resource).origin }
            : undefined,
        });
      }
      configureOperatorRoutes(app, {
        broker: broker.client,
        memory: config.memory,
        chat: config.chat,
        timeoutMs: config.brokerTimeoutMs,
      });
      consoleServed = await configureConsoleRoute(app);
    },
  });
  brokerMetrics.register(host.metrics);
  const { restUrl, grpcUrl } = await host.start();
  resources.defer(() => host.stop());
  if (config.requireApiKey) {
    keys.start();
    resources.defer(() => keys.stop());
  }
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
  return {
    name: "gateway",
    urls: { rest: restUrl, grpc: grpcUrl },
    brokerTransport: broker.lastTransport,
    stop: resources.close,
  };
}
