export type { Sql, SqlExecutor, SqlLogger, SqlResult } from "./sql/sql.js";
export { createPostgresSql, type PostgresSqlOptions } from "./sql/postgres-sql.js";
export { createPgliteSql, type PgliteSqlOptions } from "./sql/pglite-sql.js";
export { type CreateSqlOptions, createSql } from "./sql/create-sql.js";
export {
  type MigrationLogger,
  type RunMigrationsOptions,
  runMigrations,
} from "./sql/migrator.js";
export { type MigrateAtBootOptions, migrateAtBoot } from "./sql/migrate-at-boot.js";
export type { BlobStore, StoredBlob } from "./blob/blob.js";
export { createBlobStore } from "./blob/create-blob-store.js";
export { createFileBlobStore, type FileBlobStoreOptions } from "./blob/file-blob-store.js";
export { createS3BlobStore, type S3BlobStoreOptions } from "./blob/s3-blob-store.js";
export type { Cache, MessageHandler, Unsubscribe } from "./cache/cache.js";
export { type CacheOptions, createCache } from "./cache/create-cache.js";
export type { HandlerErrorReporter } from "./cache/handler-error.js";
export { createMemoryCache, type MemoryCacheOptions } from "./cache/memory-cache.js";
export { createRedisCache, type RedisCacheOptions } from "./cache/redis-cache.js";
export { type BullmqQueueOptions, createBullmqQueue } from "./queue/bullmq-queue.js";
export { createQueue, type QueueOptions } from "./queue/create-queue.js";
export { createMemoryQueue } from "./queue/memory-queue.js";
export type { FailedJob, Job, JobHandler, JobOptions, Queue } from "./queue/queue.js";
export { type HttpBinding, readHttpBindings } from "./rpc/http-rule.js";
export { restProtocolName } from "./rpc/rest-context.js";
export { type RestRoutesOptions, registerRestRoutes } from "./rpc/transcoder.js";
