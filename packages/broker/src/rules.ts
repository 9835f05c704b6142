// The provider registration rules and field table, for tools that check a provider without
// running a broker (atriumctl): this entry point loads neither the server, nor its gRPC, SAML or
// cloud clients.
export {
  isProviderField,
  PROVIDER_FIELDS,
  type ProviderField,
  type ProviderFields,
} from "./providers/provider-fields.js";
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
export { WEBHOOK_EVENT_TYPES, type WebhookEventType } from "./webhooks/webhook-events.js";
export {
  validateWebhookFields,
  WEBHOOK_NAME_PATTERN,
  WebhookFieldError,
  type WebhookFields,
  type WebhookRuleOptions,
} from "./webhooks/webhook-rules.js";
