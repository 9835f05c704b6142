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
