import type { FastifyInstance } from "fastify";
import type { CorsPolicy } from "../access/cors.js";

export interface GatewayRestOptions {
  cors: CorsPolicy;
  /**
   * Inbound key check, when keys are required: run here too so a request without a key is
   * refused before its body is parsed (the handlers check again, for gRPC).
   */
  checkApiKey?: (presented: string | undefined, path: string) => void;
}

const corsHeaders = "content-type, x-api-key, authorization, last-event-id, mcp-protocol-version";
const corsMethods = "GET, POST, PUT, PATCH, DELETE, OPTIONS";

/**
 * The REST-only parts: CORS and the browser redirect of /auth/callback. The caller address
 * allowlist runs earlier, in the service host, for both transports.
 */
export function configureGatewayRest(app: FastifyInstance, options: GatewayRestOptions): void {
  app.addHook("onRequest", async (request, reply) => {
    const origin = options.cors.allowOrigin(request.headers.origin);
    if (origin !== undefined) {
      reply.header("access-control-allow-origin", origin);
      reply.header("vary", "Origin");
    }
    if (request.method === "OPTIONS" && request.headers["access-control-request-method"]) {
      if (origin !== undefined) {
        reply.header("access-control-allow-methods", corsMethods);
        reply.header("access-control-allow-headers", corsHeaders);
        reply.header("access-control-max-age", "600");
      }
      return reply.code(204).send();
    }
    const key = request.headers["x-api-key"];
    options.checkApiKey?.(Array.isArray(key) ? key[0] : key, request.url.split("?")[0]);
  });

  app.addHook("onSend", async (request, reply, payload) => {
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
