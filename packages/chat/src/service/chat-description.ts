import { createRequire } from "node:module";
import {
  authenticatorDescription,
  authenticatorSecurity,
  authenticatorSecuritySchemes,
  describeRoutes,
  routeDescription,
} from "@atrium/kit";
import fastifySwagger from "@fastify/swagger";
import type { FastifyInstance } from "fastify";
import type { ChatKernel } from "../kernel/kernel-types.js";
import { createChatRouter } from "../router/chat-router.js";

/** Where the agent host serves its OpenAPI document (committed as openapi/chat.openapi.json). */
export const chatDescriptionPath = "/openapi.json";

/** Mount prefix of the chat router, as in the spec's reference usage. */
export const chatMountPrefix = "/api/v1";

/** Stamped from VERSION like every manifest (scripts/stamp-version.mjs). */
const { version } = createRequire(import.meta.url)("../../package.json") as { version: string };

/**
 * Registers @fastify/swagger, which collects the schemas and `tags` of every route registered
 * after it (so the chat router, not /health and /metrics), and serves the document at
 * chatDescriptionPath, behind the host's authentication like every chat route.
 */
export async function registerChatDescription(app: FastifyInstance): Promise<void> {
  await app.register(fastifySwagger, {
    openapi: routeDescription({
      title: "chat",
      version,
      description:
        "The agent host: POST a message to the kernel and get one answer, follow the run's " +
        "trace events as Server-Sent Events, read them back later.\n\n" +
        authenticatorDescription("ATRIUM_AGENT"),
      port: 8000,
      tags: [{ name: "chat", description: "Chat messages and their trace events." }],
      security: authenticatorSecurity,
      securitySchemes: { ...authenticatorSecuritySchemes },
    }),
  });
  app.get(chatDescriptionPath, { schema: { hide: true } }, async () => app.swagger());
}

/**
 * The document the agent host serves, built without starting it: `make gen` writes it to
 * openapi/ (scripts/gen-chat-openapi.ts). Routes are only registered, never called, so the
 * kernel is a stand-in.
 */
export function chatOpenApiDocument(): Promise<Record<string, unknown>> {
  return describeRoutes(async (app) => {
    await registerChatDescription(app);
    const kernel = { traceBus: {}, execute: () => Promise.reject(new Error("not served")) };
    await app.register(createChatRouter(kernel as unknown as ChatKernel), {
      prefix: chatMountPrefix,
    });
  });
}
