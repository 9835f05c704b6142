import { readFile } from "node:fs/promises";
import {
  AtriumError,
  type AuthRequest,
  apiKeyDigestHex,
  Code,
  type Logger,
  normalizeApiKey,
  requestCallerAddress,
} from "@atrium/kit";
import {
  createMcpHttpHandler,
  createMemorySessions,
  type McpScope,
  McpToolError,
  parseScopeDirectory,
  type ScopeDirectory,
} from "@atrium/mcp";
import { createChatClient, createMemoryClient, sdkVersion } from "@atrium/sdk";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { BrokerClient } from "../broker/broker-client.js";
import type { McpConfig } from "../config/gateway-config.js";
import type { GatewayHandlers } from "../service/gateway-handlers.js";
import { createAgentFetch } from "./agent-fetch.js";
import { createInProcessConnections } from "./in-process-connections.js";
import { createMcpOAuth, protectedResourcePath } from "./mcp-oauth.js";
import { createMcpOriginCheck } from "./mcp-origin.js";
import { traceMemoryOperations } from "./traced-memory-client.js";

export interface McpRouteOptions {
  config: McpConfig;
  broker: BrokerClient;
  /** The gateway's own handlers, which credentialed calls use in process. */
  handlers: GatewayHandlers;
  logger: Logger;
  /** Given when `config.oauth` is set. */
  oauth?: {
    /** The origin /mcp is published at, for the metadata URL in challenges. */
    publicOrigin: string;
  };
}

const metadataPaths = [protectedResourcePath, "/.well-known/oauth-protected-resource"];

const bearerOf = (authorization: string | null | undefined) =>
  /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "")?.[1];

/**
 * With OAuth on, what the gateway's key check leaves to this route: the metadata documents (open)
 * and a POST /mcp with a Bearer token (verified here) or with no credential at all (answered here
 * with the OAuth challenge). A POST /mcp presenting only an X-API-Key is checked by the host like
 * any request; GET and DELETE /mcp answer 405 whatever they carry.
 */
export function mcpOAuthChecksItself(request: AuthRequest): boolean {
  if (request.path === undefined) return false;
  if (metadataPaths.includes(request.path)) return true;
  if (request.path !== "/mcp") return false;
  return (
    request.method !== "POST" ||
    bearerOf(request.headers.get("authorization")) !== undefined ||
    normalizeApiKey(request.headers.get("x-api-key")) === undefined
  );
}

interface McpCaller {
  scope: McpScope;
  /** Identifies the caller (a digest, never the key or token) for cancellation matching. */
  callerKey: string;
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
  const { config, broker, handlers, logger } = options;
  const oauth =
    config.oauth && options.oauth
      ? { ...createMcpOAuth(config.oauth, options.oauth.publicOrigin), ...options.oauth }
      : undefined;
  const memoryFetch = createAgentFetch();
  app.addHook("onClose", async () => memoryFetch.close());
  const memory = traceMemoryOperations(
    createMemoryClient({
      baseUrl: config.memoryUrl,
      apiKey: config.memoryApiKey,
      fetch: memoryFetch.fetch,
    }),
    config.memoryUrl,
  );
  const chat = createChatClient({
    baseUrl: config.chatUrl,
    headers: config.chatApiKey ? { "x-api-key": config.chatApiKey } : undefined,
  });
  const sessions = createMemorySessions({ memory });
  const originAllowed = createMcpOriginCheck(config);
  // Before the key hooks' verdicts matter: a foreign page is refused whatever it presents.
  app.addHook("onRequest", async (request, reply) => {
    if (request.routeOptions.url !== "/mcp") return;
    const origin = request.headers.origin;
    if (originAllowed(origin, request.socket.localPort)) return;
    logger.warn({ path: "/mcp", origin }, "MCP request from a foreign origin refused");
    return reply
      .code(403)
      .send(jsonRpcError(`Origin ${origin} is not allowed to call /mcp (MCP_ALLOWED_ORIGINS)`));
  });
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

  /**
   * Who is calling: an OAuth access token's subject (when OAuth is on and a Bearer token is
   * presented) or an API key, which the host has already checked when inbound keys are on;
   * either way the scope list decides what they may touch.
   */
  const authenticate = async (request: FastifyRequest, reply: FastifyReply): Promise<McpCaller> => {
    const reject = (error: AtriumError, mechanism: string, challenge?: string) => {
      logger.warn({ path: "/mcp", mechanism }, "authentication rejected");
      if (challenge) reply.header("www-authenticate", challenge);
      return error;
    };
    const bearer = bearerOf(request.headers.authorization);
    if (oauth && bearer) {
      let subject: string;
      try {
        subject = await oauth.subjectOf(bearer);
      } catch (error) {
        const message = (error as Error).message;
        throw reject(
          new AtriumError(Code.Unauthenticated, `OAuth access token refused: ${message}`),
          "oauth",
          oauth.challenge("invalid_token", message),
        );
      }
      const scope = scopes.forSubject(subject);
      if (!scope) {
        throw reject(
          new AtriumError(Code.PermissionDenied, "the access token's subject has no MCP scope"),
          "mcp_scope",
          oauth.challenge("insufficient_scope", "no MCP scope for this subject"),
        );
      }
      return { scope, callerKey: apiKeyDigestHex(`sub:${subject}`) };
    }
    const presented = request.headers["x-api-key"];
    const key = normalizeApiKey(Array.isArray(presented) ? presented[0] : presented);
    if (oauth && key === undefined) {
      throw reject(
        new AtriumError(Code.Unauthenticated, "an X-API-Key or an OAuth Bearer token is required"),
        "api_key",
        oauth.challenge(),
      );
    }
    const digest = key === undefined ? undefined : apiKeyDigestHex(key);
    const scope = digest === undefined ? undefined : scopes.forKeyDigest(digest);
    if (key === undefined || digest === undefined || !scope) {
      throw reject(
        new AtriumError(Code.PermissionDenied, "X-API-Key has no MCP scope"),
        "mcp_scope",
      );
    }
    return { scope, callerKey: digest };
  };

  if (oauth) {
    const metadata = async () => oauth.metadata();
    app.get(protectedResourcePath, metadata);
    // Clients that look the document up at the origin's root find the same one.
    app.get("/.well-known/oauth-protected-resource", metadata);
  }

  app.post("/mcp", async (request, reply) => {
    const { scope, callerKey } = await authenticate(request, reply);
    const clientAgent = request.headers["user-agent"] ?? "unknown";
    const connections = createInProcessConnections(
      handlers,
      {
        remoteAddress: requestCallerAddress(request),
        userAgent: `atrium-mcp/${sdkVersion} (${clientAgent})`,
      },
      logger,
    );
    reply.hijack();
    await handler.handle(request.raw, reply.raw, request.body, {
      callerKey,
      context: {
        scope,
        memory,
        sessions,
        chat,
        connections,
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
      .send(jsonRpcError("Method not allowed: this MCP endpoint is stateless; POST only"));
  app.get("/mcp", notAllowed);
  app.delete("/mcp", notAllowed);
}

/** An HTTP-level refusal in the JSON-RPC shape MCP clients read. */
const jsonRpcError = (message: string) => ({
  jsonrpc: "2.0",
  error: { code: -32000, message },
  id: null,
});
