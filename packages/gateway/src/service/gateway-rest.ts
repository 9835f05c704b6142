import type { FastifyInstance } from "fastify";
import type { CorsPolicy } from "../access/cors.js";

export interface GatewayRestOptions {
  cors: CorsPolicy;
}

// mcp-method and mcp-name: the routing headers every MCP 2026-07-28 request carries.
const corsHeaders =
  "content-type, x-api-key, authorization, last-event-id, mcp-protocol-version, mcp-method, mcp-name";
const corsMethods = "GET, POST, PUT, PATCH, DELETE, OPTIONS";

/**
 * The REST-only parts: CORS and the browser redirect of /auth/callback. The caller address
 * allowlist and the key check run earlier, in the service host, for both transports.
 */
export function configureGatewayRest(app: FastifyInstance, options: GatewayRestOptions): void {
  app.addHook("onRequest", async (request, reply) => {
    if (request.method !== "OPTIONS" || !request.headers["access-control-request-method"]) return;
    if (options.cors.allowOrigin(request.headers.origin) !== undefined) {
      reply.header("access-control-allow-methods", corsMethods);
      reply.header("access-control-allow-headers", corsHeaders);
      reply.header("access-control-max-age", "600");
    }
    return reply.code(204).send();
  });

  app.addHook("onSend", async (request, reply, payload) => {
    // On every answer, refusals included, so a page can read why its call was refused.
    const origin = options.cors.allowOrigin(request.headers.origin);
    if (origin !== undefined) {
      reply.header("access-control-allow-origin", origin);
      reply.header("vary", "Origin");
    }
    if (
      request.routeOptions.url === "/auth/callback" &&
      reply.statusCode === 200 &&
      reply.getHeader("location")
    ) {
      reply.code(303);
    }
    return payload;
  });
}
