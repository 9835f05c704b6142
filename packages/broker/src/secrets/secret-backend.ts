/** Where provider client secrets live (`SECRET_BACKEND`). */
export interface SecretBackend {
  readonly kind: "internal" | "gcp";
  /**
   * Stores a new value for the provider's secret. Returns either a sealed column value (internal)
   * or an immutable version reference (external); the other is undefined.
   */
  put(providerId: string, secret: string): Promise<StoredSecret>;
  /** Reads the value a stored reference points at. */
  read(providerId: string, stored: StoredSecret): Promise<string>;
  /** Deletes the provider's external secret; false when there was none. */
  remove(providerId: string): Promise<boolean>;
  /** Start-up check: a backend that cannot be reached stops the broker. */
  check(): Promise<void>;
}

export interface StoredSecret {
  enc?: string | null;
  ref?: string | null;
}
