import type { AtriumMcpServerOptions } from "./create-mcp-server.js";

export interface ServerPool<Server> {
  /**
   * An idle server that last served this caller with these options, or a new one; it is the
   * caller's until released.
   */
  acquire(callerKey: string, options: AtriumMcpServerOptions): Server;
  /** Returns a server whose handlers have all finished. */
  release(callerKey: string, options: AtriumMcpServerOptions, server: Server): void;
}

export interface ServerPoolOptions<Server> {
  /** Idle servers kept per caller; more concurrent requests of one caller build more. */
  maxIdlePerCaller: number;
  /** Callers with idle servers; the one that has waited longest loses them first. */
  maxCallers: number;
  /** Builds a server (with whatever it stays connected to) when no idle one fits. */
  build(options: AtriumMcpServerOptions): Server;
}

/**
 * Idle MCP servers, so a request does not pay for building one (all tools and resources, about
 * a third of a millisecond). A server serves one request at a time. A server keeps no caller's context (that travels with each request), and
 * it only ever serves one caller: whatever the SDK itself keeps on a server between requests
 * (request ids it tracks, a handler that outlives its request) stays with that caller. The pool
 * is this process's alone and holds no session: any gateway instance can answer any request.
 */
export function createServerPool<Server>(options: ServerPoolOptions<Server>): ServerPool<Server> {
  // Insertion order is recency of release: the first entry is the caller idle the longest.
  const idle = new Map<string, Server[]>();
  const keyOf = (callerKey: string, server: AtriumMcpServerOptions) =>
    `${callerKey}\u0000${JSON.stringify(server.limits)}`;
  return {
    acquire(callerKey, server) {
      return idle.get(keyOf(callerKey, server))?.pop() ?? options.build(server);
    },
    release(callerKey, server, built) {
      const key = keyOf(callerKey, server);
      const servers = idle.get(key) ?? [];
      idle.delete(key);
      if (servers.length < options.maxIdlePerCaller) servers.push(built);
      idle.set(key, servers);
      for (const oldest of idle.keys()) {
        if (idle.size <= options.maxCallers) break;
        idle.delete(oldest);
      }
    },
  };
}
