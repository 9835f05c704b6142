export {
  type ReceivedWebhook,
  type ReceiverAnswer,
  startWebhookReceiver,
  type WebhookReceiver,
} from "@atrium/kit/testing";
export { type FakeSecretManager, startFakeSecretManager } from "./fake-secret-manager.js";
export { type StoredConnection, storeConnections } from "./stored-connections.js";
export { startTestBroker, type TestBroker, testBrokerEnv } from "./test-broker.js";
export {
  startTestOidcProvider,
  type TestOidcProvider,
  type TestOidcProviderOptions,
} from "./test-oidc-provider.js";
