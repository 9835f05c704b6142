import { SecretManagerServiceClient } from "@google-cloud/secret-manager";
import type { SecretBackend } from "./secret-backend.js";

export interface GcpSecretBackendOptions {
  /** GCP project id that holds the secrets. */
  project: string;
  /** Secret ids are `<prefix>-<provider id>`. */
  prefix: string;
  /** Client options, e.g. `{ apiEndpoint, port, sslCreds }` for a local Secret Manager. */
  clientOptions?: ConstructorParameters<typeof SecretManagerServiceClient>[0];
}

// gRPC status codes the client surfaces on `error.code`.
const NOT_FOUND = 5;
const ALREADY_EXISTS = 6;

function grpcCode(error: unknown): number | undefined {
  return typeof error === "object" && error !== null && "code" in error
    ? Number((error as { code: unknown }).code)
    : undefined;
}

/**
 * Google Secret Manager: one secret per provider, a new version per rotation, and the provider row
 * keeps the immutable version name so reads are consistent while a rotation is in flight.
 */
export function createGcpSecretBackend(options: GcpSecretBackendOptions): SecretBackend & {
  close(): Promise<void>;
} {
  const client = new SecretManagerServiceClient({
    projectId: options.project,
    ...options.clientOptions,
  });
  const parent = `projects/${options.project}`;
  const secretId = (providerId: string) => `${options.prefix}-${providerId}`;
  const secretName = (providerId: string) => `${parent}/secrets/${secretId(providerId)}`;
  return {
    kind: "gcp",
    async put(providerId, secret) {
      try {
        await client.createSecret({
          parent,
          secretId: secretId(providerId),
          secret: { replication: { automatic: {} } },
        });
      } catch (error) {
        if (grpcCode(error) !== ALREADY_EXISTS) throw error;
      }
      const [version] = await client.addSecretVersion({
        parent: secretName(providerId),
        payload: { data: Buffer.from(secret, "utf8") },
      });
      if (!version.name) throw new Error("secret manager returned a version without a name");
      return { ref: version.name };
    },
    async read(providerId, stored) {
      if (!stored.ref) throw new Error(`provider ${providerId} has no secret version reference`);
      const [response] = await client.accessSecretVersion({ name: stored.ref });
      const data = response.payload?.data;
      if (data === undefined || data === null) throw new Error("secret version has no payload");
      return typeof data === "string" ? data : Buffer.from(data).toString("utf8");
    },
    async remove(providerId) {
      try {
        await client.deleteSecret({ name: secretName(providerId) });
        return true;
      } catch (error) {
        if (grpcCode(error) === NOT_FOUND) return false;
        throw error;
      }
    },
    async check() {
      // Listing one secret proves credentials, endpoint and project are usable.
      await client.listSecrets({ parent, pageSize: 1 }, { autoPaginate: false });
    },
    async close() {
      await client.close();
    },
  };
}
