import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

/**
 * AES-256-GCM envelope for secrets at rest: `<keyId>:<base64(nonce ‖ ciphertext ‖ tag)>`. The key
 * id prefix lets a deployment add a new current key while rows sealed under an old one still open.
 */
export interface Vault {
  /** `additionalData` binds the ciphertext to its row (a connection id), so rows cannot be swapped. */
  seal(plaintext: string, additionalData: string): string;
  open(sealed: string, additionalData: string): string;
}

export interface VaultOptions {
  /** Key id → 32-byte key. */
  keys: ReadonlyMap<string, Buffer>;
  /** Id of the key that seals new values. */
  currentKeyId: string;
}

const NONCE_BYTES = 12;
const TAG_BYTES = 16;

export function createVault(options: VaultOptions): Vault {
  const current = options.keys.get(options.currentKeyId);
  if (!current) throw new Error(`vault key "${options.currentKeyId}" is not configured`);
  for (const [id, key] of options.keys) {
    if (key.length !== 32) throw new Error(`vault key "${id}" must be 32 bytes`);
    if (id.includes(":")) throw new Error(`vault key id "${id}" must not contain ":"`);
  }
  return {
    seal(plaintext, additionalData) {
      const nonce = randomBytes(NONCE_BYTES);
      const cipher = createCipheriv("aes-256-gcm", current, nonce);
      cipher.setAAD(Buffer.from(additionalData, "utf8"));
      const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
      const sealed = Buffer.concat([nonce, body, cipher.getAuthTag()]).toString("base64");
      return `${options.currentKeyId}:${sealed}`;
    },
    open(sealed, additionalData) {
      const colon = sealed.indexOf(":");
      const keyId = colon > 0 ? sealed.slice(0, colon) : "";
      const key = options.keys.get(keyId);
      // The message names neither key nor ciphertext: it may reach a log.
      if (!key) throw new Error(`no vault key with id "${keyId}"`);
      const raw = Buffer.from(sealed.slice(colon + 1), "base64");
      if (raw.length < NONCE_BYTES + TAG_BYTES) throw new Error("sealed value is truncated");
      const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, NONCE_BYTES));
      decipher.setAAD(Buffer.from(additionalData, "utf8"));
      decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
      try {
        return Buffer.concat([
          decipher.update(raw.subarray(NONCE_BYTES, raw.length - TAG_BYTES)),
          decipher.final(),
        ]).toString("utf8");
      } catch {
        throw new Error("sealed value failed authentication (wrong key or additional data)");
      }
    },
  };
}
