import { createRequire } from "node:module";
import {
  authenticatorDescription,
  authenticatorSecuritySchemes,
  describeRoutes,
  routeDescription,
} from "@atrium/kit";
import fastifySwagger from "@fastify/swagger";
import { type OperatorRoutesOptions, registerOperatorRoutes } from "./operator-routes.js";

/** Stamped from VERSION like every manifest (scripts/stamp-version.mjs). */
const { version } = createRequire(import.meta.url)("../../package.json") as { version: string };

/**
 * The OpenAPI document of memory's operator routes, which @fastify/swagger collects from their
 * route schemas; `make gen` writes it to openapi/memory.operator.openapi.json. The routes are only
 * registered, never called, so their stores are stand-ins.
 */
export function memoryOperatorOpenApiDocument(): Promise<Record<string, unknown>> {
  return describeRoutes(async (app) => {
    await app.register(fastifySwagger, {
      openapi: routeDescription({
        title: "memory operator",
        version,
        description:
          "Read-only views of the memory a user has, search with ranks and erasure, for an " +
          "operator's console (the gateway's `/v1/operator/memory/*` forwards here).\n\n" +
          authenticatorDescription("ATRIUM_MEMORY") +
          "\n\nA caller that authenticated as a JWT identity is an end user, not an operator: " +
          "every operator route answers it 403, so they are reached with the API key alone.",
        port: 8080,
        tags: [{ name: "operator", description: "An operator's view of users' memory." }],
        security: [{ ApiKey: [] }, { ApiKeyBearer: [] }, {}],
        securitySchemes: {
          ApiKey: authenticatorSecuritySchemes.ApiKey,
          ApiKeyBearer: authenticatorSecuritySchemes.ApiKeyBearer,
        },
      }),
    });
    const standIn = {} as never;
    const options: OperatorRoutesOptions = {
      sql: standIn,
      events: standIn,
      retrieval: standIn,
      embedder: standIn,
      stmWindowSize: 0,
      forget: standIn,
    };
    await registerOperatorRoutes(app, options);
  });
}
