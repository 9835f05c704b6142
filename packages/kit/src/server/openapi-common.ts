/**
 * What every Atrium OpenAPI document says alike, whether the proto generator or @fastify/swagger
 * writes it: the licence (LICENSE at the repository root) and how a self-hosted listener is
 * reached.
 */
export const openApiLicence = {
  name: "Apache-2.0",
  url: "https://www.apache.org/licenses/LICENSE-2.0",
};

/** The REST listener as `make start` runs it, with the parts a deployment changes as variables. */
export function openApiDefaultServer(port: number) {
  return {
    url: "{scheme}://{host}:{port}",
    description: "A self-hosted Atrium; the defaults are a local `make start`.",
    variables: {
      scheme: { default: "http", enum: ["http", "https"] },
      host: { default: "localhost" },
      port: { default: String(port) },
    },
  };
}
