import Fastify, { type FastifyInstance } from "fastify";
import { openApiDefaultServer, openApiLicence } from "./openapi-common.js";

/** What an OpenAPI document of a service's fastify routes says about itself. */
export interface RouteDescriptionOptions<Schemes> {
  title: string;
  /** The package's version (stamped from VERSION). */
  version: string;
  description: string;
  /** The REST port of a local `make start`, for the default server. */
  port: number;
  tags: { name: string; description: string }[];
  security: Record<string, string[]>[];
  securitySchemes: Schemes;
}

/**
 * The `openapi` option of @fastify/swagger, with what every Atrium document says alike (OpenAPI
 * 3.0.3, the licence, the default server). The service registers the plugin itself: importing
 * it is what gives its route schemas their OpenAPI fields.
 */
export function routeDescription<Schemes>(options: RouteDescriptionOptions<Schemes>) {
  return {
    openapi: "3.0.3",
    info: {
      title: options.title,
      version: options.version,
      description: options.description,
      license: openApiLicence,
    },
    servers: [openApiDefaultServer(options.port)],
    tags: options.tags,
    security: options.security,
    components: { securitySchemes: options.securitySchemes },
  };
}

/**
 * The document of the routes `register` adds (after @fastify/swagger, which it registers first),
 * built without serving them: `make gen` writes it to openapi/. The routes are only registered,
 * never called, so what they reach may be a stand-in.
 */
export async function describeRoutes(
  register: (app: FastifyInstance) => Promise<void>,
): Promise<Record<string, unknown>> {
  const app = Fastify();
  try {
    await register(app);
    await app.ready();
    // `swagger` is what @fastify/swagger decorates the instance with; kit does not load it.
    return (app as unknown as { swagger(): Record<string, unknown> }).swagger();
  } finally {
    await app.close();
  }
}
