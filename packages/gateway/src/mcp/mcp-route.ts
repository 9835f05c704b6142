import { readFile } from "node:fs/promises";
import { AtriumError, Code, type Logger, requestCallerAddress } from "@atrium/kit";
import {
  createMcpHttpHandler,
  createMemorySessions,
  keyDigest,
  McpToolError,
  parseScopeDirectory,
  type ScopeDirectory,
} from "@atrium/mcp";
import { createChatClient, createGatewayClient, createMemoryClient, sdkVersion } from "@atrium/sdk";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { BrokerClient } from "../broker/broker-client.js";
import type { McpConfig } from "../config/gateway-config.js";
import { inProcessBaseUrl, inProcessFetch } from "./in-process-fetch.js";

export interface McpRouteOptions {
  config: McpConfig;
  broker: BrokerClient;
  logger: Logger;
}

/** Reads the key → scope list once at start-up; a bad list stops the gateway. */
export async function loadScopes(config: McpConfig): Promise<ScopeDirectory> {
  const json =
    "json" in config.scopes ? config.scopes.json : await readFile(config.scopes.file, "utf8");
  return parseScopeDirectory(json);
}

/**
 * POST /mcp: the MCP server over Streamable HTTP, stateless. The inbound key check has already
 * run in the REST hook (missing 401, wrong 403); a valid key without an MCP scope is 403 too.
 */
export function configureMcpRoute(
  app: FastifyInstance,
  scopes: ScopeDirectory,
  options: McpRouteOptions,
): void {
  const { config, broker, logger } = options;
  const memory = createMemoryClient({ baseUrl: config.memoryUrl, apiKey: config.memoryApiKey });
  const chat = createChatClient({
    baseUrl: config.chatUrl,
    headers: config.chatApiKey ? { "x-api-key": config.chatApiKey } : undefined,
  });
  const sessions = createMemorySessions({ memory });
  const handler = createMcpHttpHandler();
  const limits = {
    timeoutMs: config.httpTimeoutMs,
    maxResponseBytes: config.httpMaxBytes,
    maxRedirects: 3,
  };

  const apiBaseUrl = async (connectionId: string, workspaceId: string, signal?: AbortSignal) => {
    try {
      const connection = await broker.getConnection({ id: connectionId, workspaceId }, { signal });
      const provider = await broker.getProvider({ id: connection.providerId }, { signal });
      return provider.apiBaseUrl;
    } catch (error) {
      if (error instanceof AtriumError && error.code === Code.NotFound) {
        throw new McpToolError(`There is no connection ${connectionId} in this key's workspace.`);
      }
      throw error;
    }
  };

  app.post("/mcp", async (request, reply) => {
    const presented = request.headers["x-api-key"];
    const key = Array.isArray(presented) ? presented[0] : presented;
    const scope = key ? scopes.forKey(key) : undefined;
    if (!key || !scope) {
      logger.warn({ path: "/mcp", mechanism: "mcp_scope" }, "authentication rejected");
      throw new AtriumError(Code.PermissionDenied, "X-API-Key has no MCP scope");
    }
    const clientAgent = request.headers["user-agent"] ?? "unknown";
    const gateway = createGatewayClient({
      baseUrl: inProcessBaseUrl,
      apiKey: key,
      fetch: inProcessFetch(app, {
        remoteAddress: requestCallerAddress(request),
        userAgent: `atrium-mcp/${sdkVersion} (${clientAgent})`,
      }),
    });
    reply.hijack();
    await handler.handle(request.raw, reply.raw, request.body, {
      callerKey: keyDigest(key),
      context: {
        scope,
        memory,
        sessions,
        chat,
        gateway,
        apiBaseUrl,
        limits,
        recordCall: (record) =>
          logger.info(
            { ...record, mcpClient: clientAgent, workspaceId: scope.workspaceId },
            "MCP credentialed call",
          ),
        onError: (error, where) => logger.error({ err: error, where }, "MCP call failed"),
      },
    });
  });

  // Stateless: no session to resume (GET) or end (DELETE).
  const notAllowed = async (_request: FastifyRequest, reply: FastifyReply) =>
    reply
      .code(405)
      .header("allow", "POST")
      .send({
        jsonrpc: "2.0",
        error: {
          code: -32000,
          message: "Method not allowed: this MCP endpoint is stateless; POST only",
        },
        id: null,
      });
  app.get("/mcp", notAllowed);
  app.delete("/mcp", notAllowed);
}
