import { createHttpClient, type FetchLike } from "./http-client.js";
import type {
  AnalyticsTriggerResult,
  ContextQuery,
  CreateSessionInput,
  CreateSessionResult,
  EventInput,
  ForgetInput,
  ForgetResult,
  InteractionInput,
  MemoryContext,
  MemoryHealth,
  SearchInput,
  SearchResult,
  StoreEventResult,
  StoreInteractionResult,
  WriteOptions,
} from "./memory-types.js";

export interface MemoryClientOptions {
  /** The memory service's REST base, e.g. http://127.0.0.1:8080 (paths add /api/v1). */
  baseUrl: string;
  /** Sent as X-API-Key when the service has API-key auth on. */
  apiKey?: string;
  /** Sent as X-JWT-Token when the service has JWT auth on; the token is then the identity. */
  jwt?: string;
  fetch?: FetchLike;
}

export interface MemoryClient {
  createSession(input: CreateSessionInput): Promise<CreateSessionResult>;
  storeInteraction(
    sessionId: string,
    input: InteractionInput,
    options?: WriteOptions,
  ): Promise<StoreInteractionResult>;
  storeEvent(
    sessionId: string,
    input: EventInput,
    options?: WriteOptions,
  ): Promise<StoreEventResult>;
  getContext(sessionId: string, query?: ContextQuery): Promise<MemoryContext>;
  search(sessionId: string, input: SearchInput): Promise<SearchResult[]>;
  /** Erases the given events, or the session's agent or user scope, and all derived from it. */
  forget(sessionId: string, input: ForgetInput): Promise<ForgetResult>;
  health(): Promise<MemoryHealth>;
  triggerGraphAnalytics(): Promise<AnalyticsTriggerResult>;
}

const retryable = (options: WriteOptions = {}): Record<string, string> =>
  options.idempotencyKey ? { "idempotency-key": options.idempotencyKey } : {};

/** Typed wrappers over the memory REST API; failures throw AtriumHttpError with status and body. */
export function createMemoryClient(options: MemoryClientOptions): MemoryClient {
  const headers: Record<string, string> = {};
  if (options.apiKey) headers["x-api-key"] = options.apiKey;
  if (options.jwt) headers["x-jwt-token"] = options.jwt;
  const http = createHttpClient({ baseUrl: options.baseUrl, fetch: options.fetch, headers });
  const session = (id: string, rest = "") => `api/v1/sessions/${encodeURIComponent(id)}${rest}`;

  return {
    createSession: (input) => http.json("POST", "api/v1/sessions", { body: input }),
    storeInteraction: (id, input, write) =>
      http.json("POST", session(id, "/interactions"), { body: input, headers: retryable(write) }),
    storeEvent: (id, input, write) =>
      http.json("POST", session(id, "/events"), { body: input, headers: retryable(write) }),
    getContext: (id, query = {}) =>
      http.json("GET", session(id, "/context"), {
        query: { limit: query.limit, query: query.query },
      }),
    async search(id, input) {
      const result = await http.json<{ results?: SearchResult[] }>(
        "POST",
        session(id, "/context/search"),
        { body: input },
      );
      return result.results ?? [];
    },
    forget: (id, input) => http.json("POST", session(id, "/forget"), { body: input }),
    health: () => http.json("GET", "api/v1/health"),
    triggerGraphAnalytics: () => http.json("POST", "api/v1/admin/analytics/trigger", { body: {} }),
  };
}
