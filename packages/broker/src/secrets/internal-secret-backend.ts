import type { Vault } from "../vault/vault.js";
import type { SecretBackend, StoredSecret } from "./secret-backend.js";

export const providerSecretAad = (providerId: string) => `provider:${providerId}`;

/** Secrets sealed by the vault in the provider row itself. */
export function createInternalSecretBackend(vault: Vault): SecretBackend {
  return {
    kind: "internal",
    async put(providerId, secret) {
      return { enc: vault.seal(secret, providerSecretAad(providerId)) };
    },
    async read(providerId, stored: StoredSecret) {
      if (!stored.enc) throw new Error(`provider ${providerId} has no client secret in its row`);
      return vault.open(stored.enc, providerSecretAad(providerId));
    },
    async remove() {
      return false;
    },
    async check() {},
  };
}
