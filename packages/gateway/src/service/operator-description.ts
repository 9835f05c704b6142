import { createRequire } from "node:module";
import {
  authenticatorSecuritySchemes,
  describeRoutes,
  ipNotAllowed,
  routeDescription,
} from "@atrium/kit";
import fastifySwagger from "@fastify/swagger";
import { configureOperatorRoutes } from "./operator-routes.js";

/** Stamped from VERSION like every manifest (scripts/stamp-version.mjs). */
const { version } = createRequire(import.meta.url)("../../package.json") as { version: string };

/**
 * The OpenAPI document of the gateway's operator routes (the console's views), which
 * @fastify/swagger collects from their route schemas; `make gen` writes it to
 * openapi/gateway.operator.openapi.json. The routes are only registered, never called, so the
 * services they reach are stand-ins.
 */
export function gatewayOperatorOpenApiDocument(): Promise<Record<string, unknown>> {
  return describeRoutes(async (app) => {
    await app.register(fastifySwagger, {
      openapi: routeDescription({
        title: "gateway operator",
        version,
        description:
          "The console's read-only view of the platform, on the gateway's origin: providers " +
          "and the audit log from the broker, workflows and their traces from the agent " +
          "host, memory from the memory service's operator routes. The gateway calls those " +
          "services with its own keys (`BROKER_API_KEY`, `MEMORY_API_KEY`, " +
          "`AGENT_CHAT_API_KEY`); their answers, errors included, are passed through.\n\n" +
          "Inbound keys are off by default (the gateway warns at start). With " +
          "`GATEWAY_REQUIRE_API_KEY=true` every operator route needs `X-API-Key` matching one " +
          "of `GATEWAY_API_KEYS` (or the key files): a missing key answers 401, a wrong one " +
          `403. Callers outside \`ALLOWED_CIDRS\` get 403 \`${ipNotAllowed.spec.reason}\`.`,
        port: 8082,
        tags: [{ name: "operator", description: "The console's views of the platform." }],
        security: [{ ApiKey: [] }, {}],
        securitySchemes: { ApiKey: authenticatorSecuritySchemes.ApiKey },
      }),
    });
    const standIn = { url: "http://127.0.0.1:9", apiKey: undefined };
    configureOperatorRoutes(app, {
      broker: {} as never,
      memory: standIn,
      chat: standIn,
      timeoutMs: 1,
    });
  });
}
