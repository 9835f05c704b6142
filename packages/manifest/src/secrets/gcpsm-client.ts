import type { SecretVersionReader } from "./gcpsm-secret-source.js";

/**
 * The Google client, loaded only when a `gcpsm:` source is used. An `ATRIUM_GCPSM_ENDPOINT`
 * (`host:port`, plaintext gRPC) points it at an emulator or a test stub instead of Google.
 */
export async function createGcpsmClient(env: NodeJS.ProcessEnv): Promise<SecretVersionReader> {
  const { SecretManagerServiceClient } = await import("@google-cloud/secret-manager");
  const endpoint = env.ATRIUM_GCPSM_ENDPOINT;
  if (!endpoint) return new SecretManagerServiceClient() as unknown as SecretVersionReader;
  const { credentials } = await import("@grpc/grpc-js");
  const url = new URL(`http://${endpoint}`);
  return new SecretManagerServiceClient({
    apiEndpoint: url.hostname,
    port: Number(url.port),
    sslCreds: credentials.createInsecure(),
  }) as unknown as SecretVersionReader;
}
