import {
  authConfigFromEnv,
  authEnabled,
  createAuthenticator,
  createCache,
  createLogger,
  createServiceHost,
  type Env,
  type Logger,
  logRedisState,
  shutdownGraceMs,
} from "@atrium/kit";
import { Gauge } from "prom-client";
import { createKernel } from "../kernel/kernel.js";
import { createLlmClient } from "../llm/llm-client.js";
import { createMemoryGateway } from "../memory/memory-gateway.js";
import { createChatRouter } from "../router/chat-router.js";
import { createTraceBus } from "../trace/trace-bus.js";
import { loadAgentConfig } from "./agent-config.js";

export interface StartAgentServiceOptions {
  env: Env;
  logger?: Logger;
}

export interface AgentService {
  name: string;
  urls: { rest: string };
  stop(): Promise<void>;
}

/** Mount prefix of the chat router, as in the spec's reference usage. */
export const chatMountPrefix = "/api/v1";

/**
 * Starts the agent host: the chat router under /api/v1 with its kernel, plus /health and
 * /metrics. Configuration problems throw ConfigError with one line naming the variable.
 */
export async function startAgentService(options: StartAgentServiceOptions): Promise<AgentService> {
  const config = loadAgentConfig(options.env);
  const auth = authConfigFromEnv("ATRIUM_AGENT", options.env);
  const logger = options.logger ?? createLogger({ name: "agent" });
  for (const warning of auth.warnings) logger.warn(warning);
  const cache = createCache({
    redisUrl: config.redisUrl,
    onRedisStateChange: logRedisState(logger),
  });
  const memory = config.memory ? createMemoryGateway(config.memory) : undefined;
  const release = async () => {
    memory?.close();
    await cache.close();
  };
  try {
    const traceBus = createTraceBus({
      cache,
      tracesDir: config.tracesDir,
      logCapacity: config.traceLogCapacity,
      retentionSeconds: config.traceRetentionSeconds,
      onError: (error, event) =>
        logger.warn(
          { err: error, workflowId: event.workflow_id, type: event.type },
          "trace event not written",
        ),
    });
    const kernel = createKernel({
      traceBus,
      llm: config.llm ? createLlmClient(config.llm) : undefined,
      memory,
      allowedHosts: config.allowedHosts,
      chromiumPath: config.chromiumPath,
      communicatorWebhookUrl: config.webhookUrl,
      requireSendApproval: config.requireSendApproval,
      gateway: config.gateway,
      communicatorConnectionId: config.sendConnectionId,
      communicatorSendUrl: config.sendUrl,
      sandbox: config.sandbox,
    });
    const host = createServiceHost({
      shutdownGraceMs: shutdownGraceMs(options.env),
      name: "agent",
      logger,
      rest: { host: config.host, port: config.port },
      authenticator: authEnabled(auth.authenticator)
        ? createAuthenticator(auth.authenticator)
        : undefined,
      tls: auth.tls,
      // /health stays 200 and reports "degraded" when memory is unreachable: chats still work.
      healthChecks: memory
        ? { cache: () => cache.ping(), memory: () => memory.health() }
        : { cache: () => cache.ping() },
      configureRest: async (app) => {
        await app.register(
          createChatRouter(kernel, {
            streamTimeoutMs: config.streamTimeoutMs,
            heartbeatMs: config.heartbeatMs,
            onError: (error, where) => logger.error({ err: error, where }, "chat request failed"),
          }),
          { prefix: chatMountPrefix },
        );
      },
    });
    new Gauge({
      name: "atrium_chat_stream_subscriptions",
      help: "Trace stream subscriptions open on this process (one per connected SSE client)",
      registers: [host.metrics],
      collect() {
        this.set(cache.subscriberCount());
      },
    });
    const { restUrl } = await host.start();
    logger.info(
      {
        rest: restUrl,
        cache: cache.kind,
        tracesDir: config.tracesDir,
        llm: config.llm ? config.llm.model : "none (classifier routing, non-LLM fallbacks)",
        memory: config.memory ? config.memory.url : "none",
      },
      "agent host ready",
    );
    let stopping: Promise<void> | undefined;
    return {
      name: "agent",
      urls: { rest: restUrl },
      stop() {
        stopping ??= (async () => {
          await host.stop();
          await traceBus.close();
          await release();
        })();
        return stopping;
      },
    };
  } catch (error) {
    await release();
    throw error;
  }
}
