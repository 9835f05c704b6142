import { memoryV1 } from "@atrium/api";
import {
  authConfigFromEnv,
  authEnabled,
  createAuthenticator,
  createBlobStore,
  createCache,
  createLogger,
  createNearCache,
  createQueue,
  createServiceHost,
  createSql,
  deploymentRedisPrefix,
  type Env,
  hostSettingsFromEnv,
  isRedisConnectionError,
  type Logger,
  logLevel,
  logRedisState,
  migrateAtBoot,
  type RedisStateChange,
  type RunningService,
  startService,
} from "@atrium/kit";
import { createChainAnalyser } from "../chains/analyse-chain.js";
import { createContinuityJudge } from "../chains/continuity.js";
import { createFairQueue } from "../chains/fair-queue.js";
import { createTextAnalysisPool } from "../chains/text-analysis-pool.js";
import { loadMemoryConfig, type MemoryConfig } from "../config/memory-config.js";
import type { Scope } from "../domain.js";
import { createCachedEmbedder } from "../embeddings/cached-embedder.js";
import type { Embedder } from "../embeddings/embedder.js";
import { createGloveEmbedder } from "../embeddings/glove-embedder.js";
import { createHashEmbedder } from "../embeddings/hash-embedder.js";
import { createOpenAiEmbedder } from "../embeddings/openai-embedder.js";
import { createWeightedHashEmbedder } from "../embeddings/weighted-hash-embedder.js";
import { createOpenAiLlm, type Llm } from "../llm/llm.js";
import { createChainCheckScheduler } from "../pipeline/chain-check-scheduler.js";
import { createChainCheckWorker } from "../pipeline/chain-check-worker.js";
import { createPromoter } from "../pipeline/promoter.js";
import { reembedChains } from "../pipeline/reembed.js";
import { createRetrieval } from "../retrieval/retrieval.js";
import { createEventStore } from "../store/events.js";
import { createIdempotencyStore } from "../store/idempotency.js";
import { createLexicalSearch } from "../store/lexical-search.js";
import { migrationsDir } from "../store/migrate.js";
import { createRecentPages } from "../store/recent-pages.js";
import { createSessionStore } from "../store/sessions.js";
import { createVectorSearch } from "../store/vector-search.js";
import { createForget } from "./forget.js";
import { createMemoryService } from "./memory-service.js";
import { registerOperatorRoutes } from "./operator-routes.js";
import { createStmWindow } from "./stm-window.js";

/** What running chain checks get to finish when the service stops. */
const queueCloseMs = 500;

export interface StartMemoryServiceOptions {
  env: NodeJS.ProcessEnv | Env;
  logger?: Logger;
}

function createEmbedder(
  config: MemoryConfig,
  cache: Parameters<typeof createCachedEmbedder>[1]["store"],
): Embedder {
  if (config.EMBEDDINGS_PROVIDER === "hash")
    return createWeightedHashEmbedder({ dimensions: config.EMBEDDINGS_DIMENSIONS });
  if (config.EMBEDDINGS_PROVIDER === "hash-v1")
    return createHashEmbedder({ dimensions: config.EMBEDDINGS_DIMENSIONS });
  if (config.EMBEDDINGS_PROVIDER === "glove") return createGloveEmbedder();
  return createCachedEmbedder(
    createOpenAiEmbedder({
      baseUrl: config.EMBEDDINGS_BASE_URL.toString(),
      apiKey: config.EMBEDDINGS_API_KEY,
      model: config.EMBEDDINGS_MODEL,
      dimensions: config.EMBEDDINGS_DIMENSIONS,
      timeoutMs: config.EMBEDDINGS_TIMEOUT,
    }),
    { store: cache },
  );
}

function createLlm(config: MemoryConfig): Llm | undefined {
  if (!config.LLM_BASE_URL) return undefined;
  return createOpenAiLlm({
    baseUrl: config.LLM_BASE_URL.toString(),
    apiKey: config.LLM_API_KEY,
    model: config.LLM_MODEL,
    timeoutMs: config.LLM_TIMEOUT,
    retries: config.LLM_MAX_RETRIES,
  });
}

/**
 * Starts the memory service: REST (default 8080) and gRPC (default 9090) from one set of
 * handlers, the chain check worker on the queue and the promoter on its schedule. Embedded
 * defaults: PGlite under ATRIUM_DATA_DIR, in-process cache and queue, GloVe embeddings, no LLM,
 * no blob store.
 */
export async function startMemoryService(
  options: StartMemoryServiceOptions,
): Promise<RunningService> {
  const config = loadMemoryConfig(options.env);
  const auth = authConfigFromEnv("ATRIUM_MEMORY", options.env);
  const logger = options.logger ?? createLogger({ name: "memory", level: logLevel(options.env) });
  for (const warning of auth.warnings) logger.warn(warning);
  return startService(logger, async (resources) => {
    const sql = await createSql({
      databaseUrl: config.DATABASE_URL?.toString(),
      dataDir: config.ATRIUM_DATA_DIR,
      name: "memory",
      logger,
    });
    resources.defer(() => sql.close());
    await migrateAtBoot({
      sql,
      dir: migrationsDir,
      namespace: "memory",
      enabled: config.AUTO_MIGRATE,
      logger,
    });
    const redisUrl = config.REDIS_URL?.toString();
    // One line when Redis goes away and one when it is back, per component; the calls that fail
    // meanwhile fall back to PostgreSQL (cache) or the sweep (queue) and log at debug only.
    let onRedisBack: (component: string) => void = () => {};
    const logState = logRedisState(logger);
    const onRedisStateChange = (change: RedisStateChange) => {
      logState(change);
      if (change.state === "up") onRedisBack(change.component);
    };
    const onCacheError = (what: string) => (error: unknown, operation: string) => {
      const level = isRedisConnectionError(error) ? "debug" : "warn";
      logger[level]({ err: error, operation }, `${what} unavailable`);
    };
    const redisPrefix =
      config.MEMORY_REDIS_PREFIX ??
      config.MEMORY_QUEUE_PREFIX ??
      deploymentRedisPrefix({
        databaseUrl: config.DATABASE_URL?.toString(),
        dataDir: config.ATRIUM_DATA_DIR,
      });
    // The cached windows and pages name rows of this deployment's database.
    const cacheKeyPrefix = `${redisPrefix}:`;
    const cache = createCache({ redisUrl, onRedisStateChange });
    resources.defer(() => cache.close());
    // GetContext's reads (the STM window, the recent pages) stay in process memory while Redis
    // reports their keys unchanged.
    const near = await createNearCache({
      cache,
      prefixes: [`${cacheKeyPrefix}stm:`, `${cacheKeyPrefix}pages:`],
    });
    resources.defer(() => near.close());
    // Closed after the queue, which lets running chain checks finish first.
    const textAnalysis = createTextAnalysisPool({ threads: config.MEMORY_ANALYSIS_THREADS });
    resources.defer(() => textAnalysis.close());
    const queue = createQueue({
      redisUrl,
      onRedisStateChange,
      prefix: redisPrefix,
    });
    // Bounded so that a stop ends within SHUTDOWN_GRACE_MS: a chain check still running then is
    // abandoned, its messages stay pending and the next start-up sweep queues them again.
    resources.defer(() => queue.close({ graceMs: queueCloseMs }));
    const blobStore = createBlobStore(config.BLOB_STORE_URL);

    const embedder = createEmbedder(config, cache);
    const llm = createLlm(config);
    const onLlmError = (error: unknown) =>
      logger.warn({ err: error }, "LLM call failed; rule-based fallback used");
    // Chain analysis and the continuity judge call the LLM in turns between tenants.
    const llmTurns = createFairQueue({ concurrency: config.MEMORY_LLM_CONCURRENCY });
    const vectorSearch = await createVectorSearch({
      sql,
      dimensions: embedder.dimensions,
      mode: config.MEMORY_VECTOR_SEARCH,
      onFallback: (reason) => logger.warn(reason),
    });
    const events = createEventStore(sql);
    const idempotency = createIdempotencyStore(sql);
    const sessions = createSessionStore(sql);
    const window = createStmWindow({
      cache,
      near,
      keyPrefix: cacheKeyPrefix,
      events,
      size: config.MEMORY_STM_CACHE_SIZE,
      onCacheError: onCacheError("STM cache"),
    });

    const recentPages = createRecentPages({
      sql,
      cache,
      near,
      keyPrefix: cacheKeyPrefix,
      onCacheError: onCacheError("recent pages cache"),
    });
    const onChainsChanged = (scopes: Scope[]) => recentPages.invalidate(scopes);
    const worker = createChainCheckWorker({
      onChainsChanged,
      sql,
      events,
      embedder,
      vectorSearch,
      textAnalysis,
      analyser: createChainAnalyser({ llm, onLlmError, textAnalysis, llmTurns }),
      judge: createContinuityJudge({
        llm,
        maxGapMs: config.MEMORY_CHAIN_GAP,
        onLlmError,
        llmTurns,
      }),
    });
    const chainChecks = createChainCheckScheduler({
      queue,
      events,
      worker,
      onQueueError: (error) =>
        logger.debug({ err: error }, "chain check not queued; the next sweep queues it"),
    });
    chainChecks.start();
    const promoter = createPromoter({
      onChainsChanged,
      sql,
      worker,
      vectorSearch,
      idleCloseMs: config.MEMORY_CHAIN_GAP,
    });
    resources.defer(() => promoter.idle());

    onRedisBack = (component) => {
      if (component === "cache") void window.dropStale();
      // Checks that could not be queued while Redis was away.
      else chainChecks.sweep().catch((error) => logger.warn({ err: error }, "sweep failed"));
    };
    // Messages stored while no worker ran (a crash, a restart) still get their chain check. With
    // the queue unreachable, the scheduled sweep does it once Redis is back.
    await chainChecks
      .sweep()
      .catch((error) => logger.warn({ err: error }, "start-up chain check sweep deferred"));
    if (config.MEMORY_PROMOTER_INTERVAL > 0) {
      const timer = setInterval(() => {
        chainChecks
          .sweep()
          .then(() => promoter.runCycle())
          .then(() => idempotency.purge())
          .catch((error) => logger.error({ err: error }, "scheduled memory cycle failed"));
      }, config.MEMORY_PROMOTER_INTERVAL);
      timer.unref();
      resources.defer(async () => clearInterval(timer));
    }

    // Chains embedded by another embedder than this one are re-embedded in the background;
    // until each is, it is found by its words only.
    const reembedding = reembedChains({ sql, embedder, vectorSearch, onChainsChanged });
    reembedding.done.then(
      (count) =>
        count > 0 &&
        logger.info({ chains: count, embeddings: embedder.model }, "chains re-embedded"),
      (error) => logger.error({ err: error }, "re-embedding chains failed"),
    );
    resources.defer(() => reembedding.stop());

    const retrieval = createRetrieval({
      sql,
      embedder,
      vectorSearch,
      lexical: createLexicalSearch(sql),
      mode: config.MEMORY_SEARCH_MODE,
    });
    const forget = createForget({
      sql,
      worker,
      vectorSearch,
      window,
      recentPages,
      blobStore,
      logger,
    });
    const implementation = createMemoryService({
      sql,
      cache,
      chainChecks,
      blobStore,
      embedder,
      sessions,
      events,
      window,
      recentPages,
      retrieval,
      promoter,
      forget,
      logger,
    });
    const host = createServiceHost({
      ...hostSettingsFromEnv(options.env),
      name: "memory",
      logger,
      rest: { host: config.MEMORY_HOST, port: config.MEMORY_REST_PORT },
      grpc: { host: config.MEMORY_HOST, port: config.MEMORY_GRPC_PORT },
      services: [
        {
          service: memoryV1.MemoryService,
          implementation,
        },
      ],
      authenticator: authEnabled(auth.authenticator)
        ? createAuthenticator(auth.authenticator)
        : undefined,
      tls: auth.tls,
      healthChecks: { cache: () => cache.ping(), database: () => sql.ping() },
      configureRest: (app) =>
        registerOperatorRoutes(app, {
          sql,
          events,
          retrieval,
          embedder,
          stmWindowSize: config.MEMORY_STM_CACHE_SIZE,
          forget,
        }),
    });
    const urls = await host.start();
    resources.defer(() => host.stop());
    logger.info(
      {
        vectorSearch: vectorSearch.kind,
        search: config.MEMORY_SEARCH_MODE,
        embeddings: embedder.model,
        llm: llm?.model ?? "none",
        blobStore: blobStore?.kind ?? "none",
        database: sql.dialect,
        cache: cache.kind,
      },
      "memory service ready",
    );
    return {
      name: "memory",
      urls: { rest: urls.restUrl, ...(urls.grpcUrl ? { grpc: urls.grpcUrl } : {}) },
      stop: resources.close,
    };
  });
}
