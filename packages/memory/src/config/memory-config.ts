import {
  type Env,
  envBoolean,
  envDuration,
  envInteger,
  envPort,
  envString,
  envUrl,
  loadConfig,
} from "@atrium/kit";
import { z } from "zod";

const schema = z.object({
  MEMORY_HOST: z.string().default("0.0.0.0"),
  MEMORY_REST_PORT: envPort().default(8080),
  MEMORY_GRPC_PORT: envPort().default(9090),
  DATABASE_URL: envUrl({ protocols: ["postgres", "postgresql"] }).optional(),
  ATRIUM_DATA_DIR: z.string().default("./data"),
  // Read as the broker reads it (true/false/1/0): under `atrium start` both share the variable.
  AUTO_MIGRATE: envBoolean().default(true),
  REDIS_URL: envUrl({ protocols: ["redis", "rediss"] }).optional(),
  // The Redis key prefix of the chain-check queue and the caches. Unset: derived from
  // DATABASE_URL (or ATRIUM_DATA_DIR), so deployments sharing a Redis never take each other's
  // jobs nor read each other's cached windows. MEMORY_QUEUE_PREFIX is its earlier name, still read.
  MEMORY_REDIS_PREFIX: envString().optional(),
  MEMORY_QUEUE_PREFIX: envString().optional(),
  BLOB_STORE_URL: z.string().optional(),
  EMBEDDINGS_PROVIDER: z.enum(["glove", "hash", "hash-v1", "openai"]).default("glove"),
  EMBEDDINGS_BASE_URL: envUrl({ protocols: ["http", "https"] }).default(
    new URL("https://api.openai.com/v1"),
  ),
  EMBEDDINGS_MODEL: envString().default("text-embedding-3-small"),
  EMBEDDINGS_API_KEY: envString().optional(),
  EMBEDDINGS_DIMENSIONS: envInteger({ min: 1, max: 16000 }).default(384),
  EMBEDDINGS_TIMEOUT: envDuration().default(30_000),
  LLM_BASE_URL: envUrl({ protocols: ["http", "https"] }).optional(),
  LLM_MODEL: envString().default("gpt-4o-mini"),
  LLM_API_KEY: envString().optional(),
  LLM_TIMEOUT: envDuration().default(30_000),
  LLM_MAX_RETRIES: envInteger({ min: 0, max: 10 }).default(2),
  MEMORY_LLM_CONCURRENCY: envInteger({ min: 1, max: 256 }).default(4),
  MEMORY_VECTOR_SEARCH: z.enum(["auto", "hnsw", "exact"]).default("auto"),
  MEMORY_SEARCH_MODE: z.enum(["hybrid", "vector"]).default("hybrid"),
  MEMORY_CHAIN_GAP: envDuration().default(30 * 60_000),
  MEMORY_PROMOTER_INTERVAL: envDuration().default(5 * 60_000),
  MEMORY_STM_CACHE_SIZE: envInteger({ min: 1, max: 10_000 }).default(200),
  MEMORY_ANALYSIS_THREADS: envInteger({ min: 0, max: 64 }).default(1),
});

export type MemoryConfig = z.output<typeof schema>;

/** The memory service's environment, validated once; a bad value names its variable. */
export function loadMemoryConfig(env: Env): MemoryConfig {
  return loadConfig(schema, env);
}
