export { type Credential, sealCredential } from "./connections/connection-record.js";
export * from "./rules.js";
export {
  BROKER_MIGRATIONS_DIR,
  type BrokerService,
  type StartBrokerServiceOptions,
  startBrokerService,
} from "./service/start-broker-service.js";
export { decodeKey, keyId, secretFingerprint } from "./vault/key-material.js";
export { createVault, type Vault, type VaultOptions } from "./vault/vault.js";
