import { memoryV1 } from "@atrium/api";
import { createGrpcClientTransport, inMemoryOperation } from "@atrium/kit";
import { Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";

/** Memory is keyed by (tenant, user, agent); a session is a cheap handle on that scope. */
export interface MemoryScope {
  tenantId: string;
  userId: string;
  agentId: string;
  /** A session the caller already holds; otherwise one is created per scope and reused. */
  sessionId?: string;
}

export interface MemoryContext {
  /** Recent events of the short-term window, oldest first. */
  recent: { role: string; content: string }[];
  /** Dialogue chains relevant to the query. */
  pages: { topic: string; summary: string }[];
}

export interface MemoryHit {
  content: string;
  similarity: number;
  sourceType: string;
  sourceId: string;
}

export interface MemoryGateway {
  context(scope: MemoryScope, query: string, signal?: AbortSignal): Promise<MemoryContext>;
  search(
    scope: MemoryScope,
    query: string,
    limit: number,
    signal?: AbortSignal,
  ): Promise<MemoryHit[]>;
  /**
   * Stores a finished turn so later chats can recall it. `answerSource` `memory` marks an answer
   * that only quotes memory back: kept in the window, never quoted by a search as new evidence.
   */
  remember(
    scope: MemoryScope,
    userMessage: string,
    answer: string,
    answerSource?: "agent" | "memory",
  ): Promise<void>;
  /** Resolves when the memory service answers its health check. */
  health(): Promise<void>;
  /** Drops the HTTP/2 connection. */
  close(): void;
}

export interface MemoryGatewayOptions {
  /** gRPC endpoint of the memory service, e.g. http://127.0.0.1:9090. */
  url: string;
  /** Sent as `X-API-Key` when the memory service requires one. */
  apiKey?: string;
  timeoutMs?: number;
}

/** The memory service through its generated Connect client over gRPC. */
export function createMemoryGateway(options: MemoryGatewayOptions): MemoryGateway {
  const interceptors: Interceptor[] = [];
  if (options.apiKey) {
    const key = options.apiKey;
    interceptors.push((next) => (request) => {
      request.header.set("x-api-key", key);
      return next(request);
    });
  }
  const transport = createGrpcClientTransport({ baseUrl: options.url, interceptors });
  const client = createClient(memoryV1.MemoryService, transport);
  const timeoutMs = options.timeoutMs ?? 10_000;
  const sessions = new Map<string, Promise<string>>();
  const scopeKey = (s: MemoryScope) => JSON.stringify([s.tenantId, s.userId, s.agentId]);
  const url = new URL(options.url);
  // The store is the scope's tenant: users and agents are partitions within it, and a user ID
  // may name a person.
  const target = (scope: MemoryScope, recordCount?: number) => ({
    url,
    storeId: scope.tenantId,
    recordCount,
  });

  function session(scope: MemoryScope): Promise<string> {
    if (scope.sessionId) return Promise.resolve(scope.sessionId);
    const key = scopeKey(scope);
    let id = sessions.get(key);
    if (!id) {
      id = client
        .createSession(
          { tenantId: scope.tenantId, userId: scope.userId, agentId: scope.agentId },
          { timeoutMs },
        )
        .then((r) => r.sessionId);
      sessions.set(key, id);
      id.catch(() => sessions.delete(key));
    }
    return id;
  }

  /** Runs a call on the scope's session; a session the service forgot is recreated once. */
  async function withSession<T>(scope: MemoryScope, call: (sessionId: string) => Promise<T>) {
    try {
      return await call(await session(scope));
    } catch (error) {
      if (scope.sessionId || !(error instanceof ConnectError) || error.code !== Code.NotFound) {
        throw error;
      }
      sessions.delete(scopeKey(scope));
      return call(await session(scope));
    }
  }

  return {
    // With a query, GetContext searches: the records it returns are the window's and the pages.
    context(scope, query, signal) {
      return inMemoryOperation("search_memory", target(scope), (span) =>
        withSession(scope, async (sessionId) => {
          const r = await client.getContext({ sessionId, query, limit: 20 }, { timeoutMs, signal });
          span?.setAttribute(
            "gen_ai.memory.record.count",
            r.stmEvents.length + r.relevantPages.length,
          );
          return {
            recent: r.stmEvents.map((e) => ({ role: e.role, content: e.content })),
            pages: r.relevantPages.map((p) => ({ topic: p.topic, summary: p.summary })),
          };
        }),
      );
    },
    search(scope, query, limit, signal) {
      return inMemoryOperation("search_memory", target(scope), (span) =>
        withSession(scope, async (sessionId) => {
          const r = await client.searchMemory({ sessionId, query, limit }, { timeoutMs, signal });
          span?.setAttribute("gen_ai.memory.record.count", r.results.length);
          return r.results.map((hit) => ({
            content: hit.content,
            similarity: hit.similarityScore,
            sourceType: hit.sourceType,
            sourceId: hit.sourceId,
          }));
        }),
      );
    },
    // A turn is two events: the user's message and the answer.
    async remember(scope, userMessage, answer, answerSource = "agent") {
      await inMemoryOperation("create_memory", target(scope, 2), async () => {
        await withSession(scope, (sessionId) =>
          client.storeInteraction(
            { sessionId, userMessage, agentResponse: answer, agentResponseSource: answerSource },
            { timeoutMs },
          ),
        );
      });
    },
    async health() {
      await client.healthCheck({}, { timeoutMs: 2000 });
    },
    close() {
      transport.close();
    },
  };
}
