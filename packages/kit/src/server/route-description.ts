import fastifySwagger, { type FastifyDynamicSwaggerOptions } from "@fastify/swagger";
import Fastify, { type FastifyInstance } from "fastify";
import { openApiDefaultServer, openApiLicence } from "./openapi-common.js";

/** What an OpenAPI document of a service's fastify routes says about itself. */
export interface RouteDescriptionOptions {
  title: string;
  /** The package's version (stamped from VERSION). */
  version: string;
  description: string;
  /** The REST port of a local `make start`, for the default server. */
  port: number;
  tags: { name: string; description: string }[];
  security: Record<string, string[]>[];
  securitySchemes: Record<string, unknown>;
}

/**
 * Registers @fastify/swagger, which collects the schemas of every route registered after it,
 * with what every Atrium document says alike (OpenAPI 3.0.3, the licence, the default server).
 */
export async function registerRouteDescription(
  app: FastifyInstance,
  options: RouteDescriptionOptions,
): Promise<void> {
  // The schemes are kit's own objects (auth/openapi-security.ts), typed loosely there.
  const openapi = {
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
  } as FastifyDynamicSwaggerOptions["openapi"];
  await app.register(fastifySwagger, { openapi });
}

/**
 * The document of the routes `register` adds, built without serving them (`make gen` writes it
 * to openapi/): the routes are only registered, never called, so what they reach may be a
 * stand-in.
 */
export async function describeRoutes(
  options: RouteDescriptionOptions,
  register: (app: FastifyInstance) => Promise<void> | void,
): Promise<Record<string, unknown>> {
  const app = Fastify();
  try {
    await registerRouteDescription(app, options);
    await register(app);
    await app.ready();
    return app.swagger() as unknown as Record<string, unknown>;
  } finally {
    await app.close();
  }
}
