import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { type AtriumMcpServerOptions, createAtriumMcpServer } from "./create-mcp-server.js";

export interface ServerPool {
  /** An idle server built with these options, or a new one; it is the caller's until released. */
  acquire(options: AtriumMcpServerOptions): McpServer;
  /** Returns a server whose transport is closed, for the next request. */
  release(options: AtriumMcpServerOptions, server: McpServer): void;
}

export interface ServerPoolOptions {
  /** Idle servers kept per set of options; more concurrent requests build more. */
  maxIdle: number;
}

/**
 * Idle MCP servers, so a request does not pay for building one (all tools and resources, about
 * a third of a millisecond). The SDK binds a server to one transport at a time, so a server serves
 * one request at a time; it keeps nothing of the request (the caller's context travels with the
 * request, and closing the transport drops its handlers' state). The pool is this process's
 * alone and holds no session: any gateway instance can answer any request.
 */
export function createServerPool(options: ServerPoolOptions): ServerPool {
  const idle = new Map<string, McpServer[]>();
  const keyOf = (server: AtriumMcpServerOptions) => JSON.stringify(server.limits);
  return {
    acquire(server) {
      return idle.get(keyOf(server))?.pop() ?? createAtriumMcpServer(server);
    },
    release(server, built) {
      const key = keyOf(server);
      let servers = idle.get(key);
      if (servers === undefined) {
        servers = [];
        idle.set(key, servers);
      }
      if (servers.length < options.maxIdle) servers.push(built);
    },
  };
}
