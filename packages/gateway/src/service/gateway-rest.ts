import { AtriumError, Code } from "@atrium/kit";
import type { FastifyInstance } from "fastify";
import type { CorsPolicy } from "../access/cors.js";
import { CLIENT_IP_HEADER } from "./gateway-handlers.js";

export interface GatewayRestOptions {
  clientIp(peer: string, forwardedFor: string | undefined): string;
  /** ALLOWED_CIDRS over the resolved caller address; /health stays reachable for probes. */
  isAllowed(ip: string): boolean;
  cors: CorsPolicy;
  /**
   * Inbound key check, when keys are required: run here too so a request without a key is
   * refused before its body is parsed (the handlers check again, for gRPC).
   */
  checkApiKey?: (presented: string | undefined, path: string) => void;
}

const corsHeaders = "content-type, x-api-key, authorization, last-event-id";
const corsMethods = "GET, POST, PUT, PATCH, DELETE, OPTIONS";

/** The REST-only parts: caller address and allowlist, CORS, and the browser redirect of /auth/callback. */
export function configureGatewayRest(app: FastifyInstance, options: GatewayRestOptions): void {
  app.addHook("onRequest", async (request, reply) => {
    const forwarded = request.headers["x-forwarded-for"];
    const ip = options.clientIp(
      request.socket.remoteAddress ?? "",
      Array.isArray(forwarded) ? forwarded.join(",") : forwarded,
    );
    // Overwritten, so a client cannot choose what the audit log records.
    request.headers[CLIENT_IP_HEADER] = ip;
    const path = request.url.split("?")[0];
    if (path !== "/health" && !options.isAllowed(ip)) {
      throw new AtriumError(Code.PermissionDenied, "caller address is not allowed", {
        httpBody: { code: "ip_not_allowed", message: "caller address is not allowed" },
      });
    }

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
    options.checkApiKey?.(Array.isArray(key) ? key[0] : key, path);
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
