import { AtriumHttpError, type MemoryClient } from "@atrium/sdk";
import type { McpScope } from "./scope.js";

export interface MemorySessions {
  /**
   * Runs `use` with a memory session of the scope. Memory is keyed by the scope, not the session,
   * so a session is only a handle: one is created on first use and again when the service no
   * longer knows it.
   */
  withSession<T>(scope: McpScope, use: (sessionId: string) => Promise<T>): Promise<T>;
}

export interface MemorySessionsOptions {
  memory: MemoryClient;
}

export function createMemorySessions(options: MemorySessionsOptions): MemorySessions {
  const sessions = new Map<string, Promise<string>>();
  const keyOf = (scope: McpScope) => `${scope.tenantId}\u0000${scope.userId}\u0000${scope.agentId}`;

  const sessionOf = (key: string, scope: McpScope) => {
    let pending = sessions.get(key);
    if (!pending) {
      pending = options.memory
        .createSession({
          tenant_id: scope.tenantId,
          user_id: scope.userId,
          agent_id: scope.agentId,
          metadata: { origin: "mcp" },
        })
        .then((created) => created.session_id);
      // A failed creation is not cached: the next call tries again.
      pending.catch(() => sessions.delete(key));
      sessions.set(key, pending);
    }
    return pending;
  };

  return {
    async withSession(scope, use) {
      const key = keyOf(scope);
      const pending = sessionOf(key, scope);
      try {
        return await use(await pending);
      } catch (error) {
        if (!(error instanceof AtriumHttpError) || error.status !== 404) throw error;
        // Another call may already have replaced the stale session.
        if (sessions.get(key) === pending) sessions.delete(key);
        return use(await sessionOf(key, scope));
      }
    },
  };
}
