/** A resolved secret; `plaintext` marks a value the encrypted file stores unencrypted. */
export interface SecretValue {
  value: string;
  plaintext: boolean;
}

/** Where `${PLACEHOLDER}` values come from. */
export interface SecretSource {
  readonly kind: "env" | "sops" | "gcpsm";
  /** Names the source in messages, e.g. `sops file secrets.enc.yaml`. */
  readonly label: string;
  /** The provider is passed because cloud secret ids drop the provider's own prefix. */
  lookup(name: string, provider: string): Promise<SecretValue | undefined>;
}

export function secretText(value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "object" && value !== null) return JSON.stringify(value);
  return String(value);
}
