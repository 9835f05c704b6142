export { BrokerConfigError } from "./config/broker-config.js";
export { type Credential, sealCredential } from "./connections/connection-record.js";
export {
  AUTH_TYPES,
  type AuthType,
  isPlaceholderValue,
  PROVIDER_NAME_MAX_LENGTH,
  PROVIDER_NAME_PATTERN,
  type ProviderInput,
  type ProviderRuleOptions,
  type RuleFinding,
  validateProviderRegistration,
} from "./providers/provider-rules.js";
export {
  BROKER_MIGRATIONS_DIR,
  type BrokerService,
  type StartBrokerServiceOptions,
  startBrokerService,
} from "./service/start-broker-service.js";
export { decodeKey, keyId, secretFingerprint } from "./vault/key-material.js";
export { createVault, type Vault, type VaultOptions } from "./vault/vault.js";
export { WEBHOOK_EVENT_TYPES, type WebhookEventType } from "./webhooks/webhook-events.js";
export {
  validateWebhookFields,
  WEBHOOK_NAME_PATTERN,
  type WebhookFields,
} from "./webhooks/webhook-rules.js";
