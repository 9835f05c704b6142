import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { join } from "node:path";
import {
  authConfigFromEnv,
  authEnabled,
  createAuthenticator,
  createCache,
  createLogger,
  createServiceHost,
  createSql,
  type Env,
  hostSettingsFromEnv,
  type Logger,
  logLevel,
  logRedisState,
  migrateAtBoot,
  type RunningService,
  startService,
} from "@atrium/kit";
import { Gauge } from "prom-client";
import { chatGatewayClient } from "../agents/gateway-client.js";
import { loadAgentConfig } from "../config/chat-config.js";
import { createKernel } from "../kernel/kernel.js";
import { createLlmClient } from "../llm/llm-client.js";
import { createMemoryGateway } from "../memory/memory-gateway.js";
import { createChatRouter } from "../router/chat-router.js";
import { chatMigrationsDir, createSqlTraceStore } from "../trace/sql-trace-store.js";
import { createTraceBus } from "../trace/trace-bus.js";
import { createFileWebhookOutbox } from "../webhooks/file-webhook-outbox.js";
import { createSqlWebhookOutbox } from "../webhooks/sql-webhook-outbox.js";
import { createStepWebhookWorker } from "../webhooks/step-webhook-worker.js";
import { chatMountPrefix, registerChatDescription } from "./chat-description.js";
import { refuseOpenListener } from "./open-listener.js";

export interface StartAgentServiceOptions {
  env: Env;
  logger?: Logger;
}

export { chatMountPrefix };

/**
 * Starts the agent host: the chat router under /api/v1 with its kernel, plus /health and
 * /metrics. Configuration problems throw ConfigError with one line naming the variable.
 */
export async function startAgentService(
  options: StartAgentServiceOptions,
): Promise<RunningService> {
  const config = loadAgentConfig(options.env);
  const auth = authConfigFromEnv("ATRIUM_AGENT", options.env);
  refuseOpenListener({
    host: config.host,
    authenticated: authEnabled(auth.authenticator),
    allowUnauthenticated: config.allowUnauthenticated,
  });
  const logger = options.logger ?? createLogger({ name: "agent", level: logLevel(options.env) });
  for (const warning of auth.warnings) logger.warn(warning);
  if (config.allowUnauthenticated && !authEnabled(auth.authenticator)) {
    logger.warn(
      "caller authentication is off (AGENT_ALLOW_UNAUTHENTICATED=true): any caller that reaches the agent host can run chats",
    );
  }
  return startService(logger, async (resources) => {
    const cache = createCache({
      redisUrl: config.redisUrl,
      onRedisStateChange: logRedisState(logger),
    });
    resources.defer(() => cache.close());
    const memory = config.memory ? createMemoryGateway(config.memory) : undefined;
    resources.defer(() => memory?.close());
    // With DATABASE_URL, history lives in PostgreSQL so that every host behind one address
    // answers it; without, in the local traces directory (one host).
    const sql = config.databaseUrl
      ? await createSql({
          databaseUrl: config.databaseUrl,
          dataDir: config.tracesDir,
          name: "chat",
          logger,
        })
      : undefined;
    resources.defer(() => sql?.close());
    if (sql) {
      await migrateAtBoot({
        sql,
        dir: chatMigrationsDir,
        namespace: "chat",
        enabled: config.autoMigrate,
        logger,
      });
    }
    const traceBus = createTraceBus({
      cache,
      tracesDir: config.tracesDir,
      store: sql
        ? createSqlTraceStore({
            sql,
            retentionSeconds: config.traceRetentionSeconds,
            onError: (error) => logger.warn({ err: error }, "trace retention sweep failed"),
          })
        : undefined,
      logCapacity: config.traceLogCapacity,
      retentionSeconds: config.traceRetentionSeconds,
      onError: (error, event) =>
        logger.warn(
          { err: error, workflowId: event.workflow_id, type: event.type },
          "trace event not written",
        ),
    });
    resources.defer(() => traceBus.close());
    // Step events wait beside the run state (the database, or the traces directory) until
    // delivered, so a host that dies after a step ended leaves its event to the next one.
    const stepEvents = config.stepWebhooks
      ? sql
        ? createSqlWebhookOutbox(sql)
        : createFileWebhookOutbox(join(config.tracesDir, ".webhooks"))
      : undefined;
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
      ...hostSettingsFromEnv(options.env),
      name: "agent",
      logger,
      rest: { host: config.host, port: config.port },
      authenticator: authEnabled(auth.authenticator)
        ? createAuthenticator(auth.authenticator)
        : undefined,
      tls: auth.tls,
      // /health stays 200 and reports "degraded" when memory is unreachable: chats still work.
      healthChecks: {
        cache: () => cache.ping(),
        ...(sql ? { database: () => sql.ping() } : {}),
        ...(memory ? { memory: () => memory.health() } : {}),
      },
      configureRest: async (app) => {
        await registerChatDescription(app);
        await app.register(
          createChatRouter(kernel, {
            streamTimeoutMs: config.streamTimeoutMs,
            heartbeatMs: config.heartbeatMs,
            onError: (error, where) => logger.error({ err: error, where }, "chat request failed"),
            ...(stepEvents ? { stepEvents } : {}),
            ...(config.gateway
              ? {
                  consent: {
                    gateway: chatGatewayClient(config.gateway),
                    intervalMs: config.consentPollMs,
                  },
                }
              : {}),
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
    resources.defer(() => host.stop());
    if (stepEvents && config.stepWebhooks) {
      const worker = createStepWebhookWorker({
        outbox: stepEvents,
        settings: config.stepWebhooks,
        instanceId: `chat-${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`,
        logger,
      });
      worker.start();
      resources.defer(() => worker.stop());
    }
    logger.info(
      {
        rest: restUrl,
        cache: cache.kind,
        traces: sql ? "postgres" : config.tracesDir,
        llm: config.llm ? config.llm.model : "none (classifier routing, non-LLM fallbacks)",
        memory: config.memory ? config.memory.url : "none",
      },
      "agent host ready",
    );
    return { name: "chat", urls: { rest: restUrl }, stop: resources.close };
  });
}
