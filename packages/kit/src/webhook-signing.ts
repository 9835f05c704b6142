// Standard Webhooks secrets and signatures for tools that must load quickly (atriumctl through
// @atrium/broker/rules): this entry point loads node:crypto and nothing else of kit.
export {
  generateWebhookSecret,
  signWebhook,
  webhookSecretKey,
} from "./webhooks/webhook-signature.js";
