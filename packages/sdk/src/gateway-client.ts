import {
  type ConnectionScope,
  createCredentialFetcher,
  type FetcherOptions,
  type GetTokenOptions,
} from "./credential-fetcher.js";
import { gatewayErrorFor } from "./errors.js";
import type {
  Agent,
  AgentSession,
  CaptureCredentialInput,
  CaptureSchema,
  Connection,
  ConnectionToken,
  CreateAgentInput,
  CreateAgentSessionInput,
  CreateWebhookInput,
  DeleteWebhookResult,
  RefreshResult,
  RevocationResult,
  StartConnectionInput,
  StartConnectionResult,
  UpdateWebhookInput,
  Webhook,
  WebhookDelivery,
} from "./gateway-types.js";
import { createHttpClient, type FetchLike } from "./http-client.js";
import { createTokenCache, type TokenCacheOptions } from "./token-cache.js";

export interface GatewayClientOptions {
  /** The gateway's REST base, e.g. http://127.0.0.1:8082. */
  baseUrl: string;
  /** Sent as X-API-Key when the gateway requires inbound keys. */
  apiKey?: string;
  /** Used for gateway calls and for the requests a fetcher sends. Default: global fetch. */
  fetch?: FetchLike;
  tokenCache?: TokenCacheOptions;
}

export interface RevokeOptions extends ConnectionScope {
  reason?: string;
}

export interface AgentScope {
  /** When given, an agent of another workspace answers 404. */
  workspaceId?: string;
  signal?: AbortSignal;
}

export interface WebhookDeliveriesQuery {
  /** pending, delivered or failed; all when omitted. */
  status?: string;
  /** Default 50, maximum 500. */
  limit?: number;
  offset?: number;
  signal?: AbortSignal;
}

export interface RotateWebhookSecretOptions {
  /** How long the previous secret stays valid: default and maximum 86400, 0 revokes it at once. */
  overlapSeconds?: number;
  signal?: AbortSignal;
}

export interface GatewayClient {
  getToken(connectionId: string, options?: GetTokenOptions): Promise<ConnectionToken>;
  refreshConnection(connectionId: string, options?: ConnectionScope): Promise<RefreshResult>;
  revokeConnection(connectionId: string, options?: RevokeOptions): Promise<RevocationResult>;
  getConnection(connectionId: string, options?: ConnectionScope): Promise<Connection>;
  listConnections(options?: ConnectionScope): Promise<Connection[]>;
  /** Starts an OAuth flow; send the user's browser to `authorization_url`. */
  startConnection(input: StartConnectionInput): Promise<StartConnectionResult>;
  getCaptureSchema(providerId: string): Promise<CaptureSchema>;
  /** Captures a static credential (api_key, basic_auth); the broker validates it first. */
  captureCredential(input: CaptureCredentialInput): Promise<Connection>;
  createAgent(input: CreateAgentInput, options?: { signal?: AbortSignal }): Promise<Agent>;
  /** The workspace's agents, disabled ones included, oldest first. */
  listAgents(workspaceId: string, options?: { signal?: AbortSignal }): Promise<Agent[]>;
  getAgent(agentId: string, options?: AgentScope): Promise<Agent>;
  /** Disables the agent and closes its open sessions; a repeat returns it unchanged. */
  disableAgent(agentId: string, options?: AgentScope): Promise<Agent>;
  /** 404 for an unknown agent, 412 for a disabled one. */
  createAgentSession(input: CreateAgentSessionInput): Promise<AgentSession>;
  getAgentSession(sessionId: string): Promise<AgentSession>;
  /**
   * Webhook subscriptions hear every connection event, so a gateway without inbound keys answers
   * these with 412. `secret` is in the answer only when it was generated.
   */
  createWebhook(input: CreateWebhookInput, options?: { signal?: AbortSignal }): Promise<Webhook>;
  listWebhooks(options?: { signal?: AbortSignal }): Promise<Webhook[]>;
  getWebhook(webhookId: string, options?: { signal?: AbortSignal }): Promise<Webhook>;
  /** Changes the fields given; a new `secret` replaces the current one without overlap. */
  updateWebhook(
    webhookId: string,
    input: UpdateWebhookInput,
    options?: { signal?: AbortSignal },
  ): Promise<Webhook>;
  /** Deletes the subscription with its deliveries. */
  deleteWebhook(
    webhookId: string,
    options?: { signal?: AbortSignal },
  ): Promise<DeleteWebhookResult>;
  /** Newest first, each with every attempt. */
  listWebhookDeliveries(
    webhookId: string,
    query?: WebhookDeliveriesQuery,
  ): Promise<WebhookDelivery[]>;
  /** A new secret, in this answer only; the previous one stays valid for the overlap. */
  rotateWebhookSecret(webhookId: string, options?: RotateWebhookSecretOptions): Promise<Webhook>;
  /** A failed delivery pending again with the same `webhook-id`; 412 when delivered or pending. */
  redeliverWebhook(
    webhookId: string,
    deliveryId: string,
    options?: { signal?: AbortSignal },
  ): Promise<WebhookDelivery>;
  /** A fetch that injects this connection's credential into every request it sends. */
  createFetcher(connectionId: string, options?: FetcherOptions): FetchLike;
}

export function createGatewayClient(options: GatewayClientOptions): GatewayClient {
  const http = createHttpClient({
    baseUrl: options.baseUrl,
    fetch: options.fetch,
    headers: options.apiKey ? { "x-api-key": options.apiKey } : {},
    errorFor: (status, body) => gatewayErrorFor(status, body, undefined),
  });
  const cache = createTokenCache(options.tokenCache);
  const inFlight = new Map<string, Promise<ConnectionToken>>();
  const cacheKey = (id: string, workspaceId = "") => `${workspaceId}\u0000${id}`;

  // Connection-scoped calls map 409/410/400 onto the typed errors for that connection.
  const connectionCall = async <T>(
    connectionId: string,
    method: string,
    path: string,
    request: Parameters<typeof http.send>[2] = {},
  ): Promise<T> => {
    const response = await http.send(method, path, {
      ...request,
      headers: { accept: "application/json" },
    });
    const text = await response.text();
    const body = text === "" ? undefined : parseJson(text);
    if (!response.ok) throw gatewayErrorFor(response.status, body, connectionId);
    return body as T;
  };

  const fetchToken = (connectionId: string, scope: ConnectionScope) =>
    connectionCall<ConnectionToken>(
      connectionId,
      "GET",
      `v1/token/${encodeURIComponent(connectionId)}`,
      {
        query: { workspace_id: scope.workspaceId },
        signal: scope.signal,
      },
    );

  const getToken = async (connectionId: string, request: GetTokenOptions = {}) => {
    const key = cacheKey(connectionId, request.workspaceId);
    if (!request.bypassCache) {
      const cached = cache.get(key);
      if (cached) return cached;
      const pending = inFlight.get(key);
      if (pending) return pending;
    }
    const pending = fetchToken(connectionId, request).then(
      (token) => {
        cache.set(key, token);
        return token;
      },
      (error: unknown) => {
        cache.delete(key);
        throw error;
      },
    );
    inFlight.set(key, pending);
    try {
      return await pending;
    } finally {
      if (inFlight.get(key) === pending) inFlight.delete(key);
    }
  };

  const refreshConnection = async (connectionId: string, scope: ConnectionScope = {}) => {
    cache.delete(cacheKey(connectionId, scope.workspaceId));
    return connectionCall<RefreshResult>(
      connectionId,
      "POST",
      `v1/refresh/${encodeURIComponent(connectionId)}`,
      { body: scope.workspaceId ? { workspace_id: scope.workspaceId } : {}, signal: scope.signal },
    );
  };

  const createFetcher = (connectionId: string, fetcherOptions: FetcherOptions = {}): FetchLike =>
    createCredentialFetcher({ getToken, refreshConnection }, connectionId, {
      ...fetcherOptions,
      fetch: http.fetch,
    });

  return {
    getToken,
    refreshConnection,
    createFetcher,
    async revokeConnection(connectionId, request = {}) {
      const result = await connectionCall<RevocationResult>(
        connectionId,
        "DELETE",
        `v1/connections/${encodeURIComponent(connectionId)}`,
        {
          query: { workspace_id: request.workspaceId, reason: request.reason },
          signal: request.signal,
        },
      );
      cache.delete(cacheKey(connectionId, request.workspaceId));
      return result;
    },
    getConnection(connectionId, scope = {}) {
      return connectionCall<Connection>(
        connectionId,
        "GET",
        `v1/connections/${encodeURIComponent(connectionId)}`,
        { query: { workspace_id: scope.workspaceId }, signal: scope.signal },
      );
    },
    async listConnections(scope = {}) {
      const result = await http.json<{ connections?: Connection[] }>("GET", "v1/connections", {
        query: { workspace_id: scope.workspaceId },
        signal: scope.signal,
      });
      return result.connections ?? [];
    },
    startConnection(input) {
      return http.json("POST", "v1/connect", { body: input });
    },
    getCaptureSchema(providerId) {
      return http.json("GET", "v1/capture-schema", { query: { provider_id: providerId } });
    },
    captureCredential(input) {
      return http.json("POST", "v1/capture-credential", { body: input });
    },
    createAgent(input, request = {}) {
      return http.json("POST", "v1/agents", { body: input, signal: request.signal });
    },
    async listAgents(workspaceId, request = {}) {
      const result = await http.json<{ agents?: Agent[] }>("GET", "v1/agents", {
        query: { workspace_id: workspaceId },
        signal: request.signal,
      });
      return result.agents ?? [];
    },
    getAgent(agentId, scope = {}) {
      return http.json("GET", `v1/agents/${encodeURIComponent(agentId)}`, {
        query: { workspace_id: scope.workspaceId },
        signal: scope.signal,
      });
    },
    disableAgent(agentId, scope = {}) {
      return http.json("DELETE", `v1/agents/${encodeURIComponent(agentId)}`, {
        query: { workspace_id: scope.workspaceId },
        signal: scope.signal,
      });
    },
    createAgentSession(input) {
      return http.json("POST", "v1/agent-sessions", { body: input });
    },
    getAgentSession(sessionId) {
      return http.json("GET", `v1/agent-sessions/${encodeURIComponent(sessionId)}`);
    },
    createWebhook(input, request = {}) {
      return http.json("POST", "v1/webhooks", { body: input, signal: request.signal });
    },
    async listWebhooks(request = {}) {
      const result = await http.json<{ webhooks?: Webhook[] }>("GET", "v1/webhooks", {
        signal: request.signal,
      });
      return result.webhooks ?? [];
    },
    getWebhook(webhookId, request = {}) {
      return http.json("GET", webhookPath(webhookId), { signal: request.signal });
    },
    updateWebhook(webhookId, input, request = {}) {
      return http.json("PATCH", webhookPath(webhookId), { body: input, signal: request.signal });
    },
    deleteWebhook(webhookId, request = {}) {
      return http.json("DELETE", webhookPath(webhookId), { signal: request.signal });
    },
    async listWebhookDeliveries(webhookId, { signal, ...query } = {}) {
      const result = await http.json<{ deliveries?: WebhookDelivery[] }>(
        "GET",
        `${webhookPath(webhookId)}/deliveries`,
        { query, signal },
      );
      return result.deliveries ?? [];
    },
    rotateWebhookSecret(webhookId, request = {}) {
      return http.json("POST", `${webhookPath(webhookId)}/rotate-secret`, {
        body:
          request.overlapSeconds === undefined ? {} : { overlap_seconds: request.overlapSeconds },
        signal: request.signal,
      });
    },
    redeliverWebhook(webhookId, deliveryId, request = {}) {
      return http.json(
        "POST",
        `${webhookPath(webhookId)}/deliveries/${encodeURIComponent(deliveryId)}/redeliver`,
        { body: {}, signal: request.signal },
      );
    },
  };
}

function webhookPath(webhookId: string): string {
  return `v1/webhooks/${encodeURIComponent(webhookId)}`;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
