export {
  type ChatClient,
  type ChatClientOptions,
  type ChatWaitingList,
  createChatClient,
} from "./chat-client.js";
export type * from "./chat-types.js";
export {
  type ConnectionScope,
  type ConnectionTokens,
  type CredentialFetcherOptions,
  createCredentialFetcher,
  type FetcherOptions,
  type GetTokenOptions,
} from "./credential-fetcher.js";
export { deadlineSignal } from "./deadline-signal.js";
export {
  AtriumHttpError,
  AttentionRequiredError,
  ConnectionNotActiveError,
  ConnectionRevokedError,
  GatewayError,
  gatewayErrorFor,
} from "./errors.js";
export {
  type AgentScope,
  createGatewayClient,
  type GatewayClient,
  type GatewayClientOptions,
  type RevokeOptions,
  type RotateWebhookSecretOptions,
  type WebhookDeliveriesQuery,
} from "./gateway-client.js";
export type * from "./gateway-types.js";
export type { FetchLike } from "./http-client.js";
export {
  createMemoryClient,
  type MemoryClient,
  type MemoryClientOptions,
} from "./memory-client.js";
export type * from "./memory-types.js";
export { type AwsCredentials, type SigV4Options, signSigV4 } from "./strategies/aws-sigv4.js";
export {
  type InjectableCredential,
  type InjectOptions,
  injectCredential,
  resolveStrategy,
} from "./strategies/inject-credential.js";
export type { OutgoingRequest } from "./strategies/outgoing-request.js";
export type { TokenCacheOptions } from "./token-cache.js";
export type { TraceStreamOptions } from "./trace-stream.js";
export { sdkVersion, userAgent } from "./version.js";
export {
  type VerifyWebhookOptions,
  verifyWebhook,
  type WebhookEvent,
  type WebhookHeaders,
  WebhookVerificationError,
} from "./webhooks.js";
