import type { SecretSource } from "./secret-source.js";

/** The one Secret Manager call the tool makes, so tests can stand in for Google. */
export interface SecretVersionReader {
  accessSecretVersion(request: {
    name: string;
  }): Promise<[{ payload?: { data?: Uint8Array | string | null } | null }, ...unknown[]]>;
}

export interface GcpsmSecretSourceOptions {
  project: string;
  secretPrefix: string;
  client: SecretVersionReader;
}

/**
 * Secret id for a placeholder: the provider's own prefix dropped (`GITHUB_CLIENT_SECRET` in
 * provider `github` reads `client-secret`), lower-cased, dashes for underscores, behind the prefix.
 */
export function gcpsmSecretId(placeholder: string, provider: string, secretPrefix: string): string {
  const providerPrefix = `${provider.toUpperCase().replace(/[^A-Z0-9]/g, "_")}_`;
  const bare = placeholder.toUpperCase().startsWith(providerPrefix)
    ? placeholder.slice(providerPrefix.length)
    : placeholder;
  const id = bare.toLowerCase().replaceAll("_", "-");
  if (secretPrefix === "") return id;
  return /[-_]$/.test(secretPrefix) ? `${secretPrefix}${id}` : `${secretPrefix}-${id}`;
}

export function createGcpsmSecretSource(options: GcpsmSecretSourceOptions): SecretSource {
  const cache = new Map<string, Promise<string | undefined>>();
  const read = async (id: string) => {
    const name = `projects/${options.project}/secrets/${id}/versions/latest`;
    try {
      const [version] = await options.client.accessSecretVersion({ name });
      const data = version.payload?.data;
      if (data == null) return undefined;
      return typeof data === "string" ? data : Buffer.from(data).toString("utf8");
    } catch (error) {
      // gRPC NOT_FOUND: the secret or its latest version does not exist.
      if ((error as { code?: number }).code === 5) return undefined;
      throw new Error(`secret manager ${name}: ${(error as Error).message}`);
    }
  };
  return {
    kind: "gcpsm",
    label: `secret manager project ${options.project}`,
    async lookup(name, provider) {
      const id = gcpsmSecretId(name, provider, options.secretPrefix);
      let pending = cache.get(id);
      if (!pending) {
        pending = read(id);
        cache.set(id, pending);
      }
      const value = await pending;
      return value === undefined ? undefined : { value, plaintext: false };
    },
  };
}
