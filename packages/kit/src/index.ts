export { hasControlCharacter, isAllowedReturnUrl } from "./access/return-url.js";
export {
  apiKeyDigest,
  apiKeyDigestHex,
  matchesApiKey,
  normalizeApiKey,
} from "./auth/api-key.js";
export {
  type ApiKeyAuthenticatorOptions,
  type ApiKeySet,
  type ApiKeySetOptions,
  apiKeyAuthenticator,
  apiKeyRejection,
  createApiKeySet,
  type KeyVerdict,
  parseKeyFile,
} from "./auth/api-key-set.js";
export {
  type AuthConfig,
  authConfigFromEnv,
  authEnvNames,
  type TlsOptions,
} from "./auth/auth-config.js";
export { type AuthExemptions, procedureName } from "./auth/auth-exemptions.js";
export { AuthenticationError, type AuthMechanism } from "./auth/authentication-error.js";
export {
  type AuthenticatorOptions,
  authEnabled,
  createAuthenticator,
} from "./auth/authenticator.js";
export {
  type Authenticator,
  type AuthRequest,
  type Identity,
  identityKey,
  type Principal,
} from "./auth/identity.js";
export { createJwtVerifier, type JwtOptions, type JwtVerifier } from "./auth/jwt.js";
export {
  authenticatorDescription,
  authenticatorSecurity,
  authenticatorSecuritySchemes,
} from "./auth/openapi-security.js";
export type { BlobStore, StoredBlob } from "./blob/blob.js";
export { createBlobStore } from "./blob/create-blob-store.js";
export { createFileBlobStore, type FileBlobStoreOptions } from "./blob/file-blob-store.js";
export { createS3BlobStore, type S3BlobStoreOptions } from "./blob/s3-blob-store.js";
export type {
  Cache,
  KeyChangeHandler,
  KeyWatch,
  MessageHandler,
  SequencedEntry,
  SubscribeOptions,
  Unsubscribe,
} from "./cache/cache.js";
export { type CacheOptions, createCache } from "./cache/create-cache.js";
export {
  type DeploymentRedisPrefixOptions,
  deploymentRedisPrefix,
} from "./cache/deployment-prefix.js";
export type { HandlerErrorReporter } from "./cache/handler-error.js";
export { createMemoryCache, type MemoryCacheOptions } from "./cache/memory-cache.js";
export { createNearCache, type NearCache, type NearCacheOptions } from "./cache/near-cache.js";
export {
  CacheUnavailableError,
  createRedisCache,
  type RedisCacheOptions,
} from "./cache/redis-cache.js";
export {
  isRedisConnectionError,
  logRedisState,
  type RedisStateChange,
  type RedisStateReporter,
} from "./cache/redis-state.js";
export {
  envBoolean,
  envCidrList,
  envDuration,
  envInteger,
  envPort,
  envString,
  envUrl,
  parseDuration,
  splitEnvList,
} from "./config/env-values.js";
export { ConfigError, type Env, loadConfig } from "./config/load-config.js";
export * from "./errors.js";
export {
  defineFixedError,
  errorInfoOf,
  type FixedError,
  type FixedErrorOptions,
  type FixedErrorSpec,
  fixedErrorBody,
  fixedErrorDomain,
} from "./fixed-error.js";
export { fixedErrorFrom, fixedErrorFromBody } from "./fixed-error-relay.js";
export {
  attentionRequired,
  connectionNotActive,
  connectionRevoked,
  fixedErrors,
  invalidCredentials,
  ipNotAllowed,
  providerNotValidatable,
  providerUnavailable,
} from "./fixed-errors.js";
export {
  createPeriodicPass,
  type PeriodicPass,
  type PeriodicPassOptions,
} from "./lifecycle/periodic-pass.js";
export {
  createResourceStack,
  type ResourceStack,
  type RunningService,
  startService,
} from "./lifecycle/service-lifecycle.js";
export {
  type LogLevel,
  logLevel,
  type RequestLogLevel,
} from "./logger/log-levels.js";
export {
  createLogger,
  type Logger,
  type LoggerOptions,
  synchronousStdout,
} from "./logger/logger.js";
export {
  createHealthReporter,
  type HealthCheck,
  type HealthReport,
  type HealthReporterOptions,
} from "./observability/health.js";
export {
  inMemoryOperation,
  type MemoryOperationName,
  type MemoryOperationTarget,
} from "./observability/memory-operation.js";
export {
  createRequestMetrics,
  type RequestMetrics,
  type RequestMetricsOptions,
  type RequestSample,
  type Transport,
} from "./observability/metrics.js";
export {
  inSpan,
  startTracing,
  type Tracing,
  type TracingOptions,
  tracingRequested,
} from "./observability/tracing.js";
export { OpenAiError } from "./openai/openai-error.js";
export { createOpenAiHttp, type OpenAiHttp, type OpenAiHttpOptions } from "./openai/openai-http.js";
export { type BullmqQueueOptions, createBullmqQueue } from "./queue/bullmq-queue.js";
export { createQueue, type QueueOptions } from "./queue/create-queue.js";
export { createMemoryQueue } from "./queue/memory-queue.js";
export type {
  FailedJob,
  Job,
  JobHandler,
  JobOptions,
  Queue,
  QueueCloseOptions,
  RunningJob,
} from "./queue/queue.js";
export { restErrorBodySchema } from "./rest-error-body.js";
export { freezeResult } from "./rpc/frozen-result.js";
export {
  createGrpcClientTransport,
  type GrpcClientTransport,
  type GrpcClientTransportOptions,
} from "./rpc/grpc-client-transport.js";
export { type HttpBinding, readHttpBindings } from "./rpc/http-rule.js";
export { callInProcess, type InProcessCallOptions } from "./rpc/in-process-call.js";
export { fillPathTemplate, type PathTemplate, parsePathTemplate } from "./rpc/path-template.js";
export { settableFromQuery } from "./rpc/request-binding.js";
export { restProtocolName } from "./rpc/rest-context.js";
export { type RestRoutesOptions, registerRestRoutes } from "./rpc/transcoder.js";
export {
  callerAddressKey,
  type ForwardedCallerResolver,
  forwardedCallerKey,
} from "./server/caller-address.js";
export { type Cidr, parseCidrList } from "./server/cidr.js";
export { toFetchHeaders } from "./server/fetch-headers.js";
export { type HostSettings, hostSettingsFromEnv } from "./server/host-settings.js";
export { openApiDefaultServer, openApiLicence } from "./server/openapi-common.js";
export { isLoopbackAddress, isPublicAddress } from "./server/public-address.js";
export { requestCallerAddress, requestIdentity, requestPrincipal } from "./server/rest-app.js";
export {
  describeRoutes,
  type RouteDescriptionOptions,
  routeDescription,
} from "./server/route-description.js";
export {
  createServiceHost,
  type ServiceHost,
  type ServiceHostOptions,
} from "./server/service-host.js";
export { shutdownGraceMs } from "./server/shutdown-grace.js";
export { defaultTransportLimits, type TransportLimits } from "./server/transport-limits.js";
export { type CreateSqlOptions, createSql } from "./sql/create-sql.js";
export {
  createGroupCommit,
  type GroupCommit,
  type GroupCommitOptions,
} from "./sql/group-commit.js";
export { type MigrateAtBootOptions, migrateAtBoot } from "./sql/migrate-at-boot.js";
export {
  type MigrationLogger,
  type RunMigrationsOptions,
  runMigrations,
} from "./sql/migrator.js";
export { createPgliteSql, type PgliteSqlOptions } from "./sql/pglite-sql.js";
export { createPostgresSql, type PostgresSqlOptions } from "./sql/postgres-sql.js";
export type { Sql, SqlExecutor, SqlLogger, SqlResult } from "./sql/sql.js";
export { isUniqueViolation } from "./sql/unique-violation.js";
export {
  createOutboxDrain,
  type OutboxAttempt,
  type OutboxDrain,
  type OutboxDrainOptions,
  type OutboxPass,
} from "./webhooks/create-outbox-drain.js";
export { retryDelayMs } from "./webhooks/webhook-retry.js";
export {
  generateWebhookSecret,
  signWebhook,
  webhookSecretKey,
} from "./webhooks/webhook-signature.js";
