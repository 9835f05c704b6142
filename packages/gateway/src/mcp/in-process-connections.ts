import { gatewayV1 } from "@atrium/api";
import {
  callerAddressKey,
  callInProcess,
  type Logger,
  normalizeHandlerError,
  restError,
} from "@atrium/kit";
import { type ConnectionToken, type ConnectionTokens, gatewayErrorFor } from "@atrium/sdk";
import { createContextValues } from "@connectrpc/connect";
import type { GatewayHandlers } from "../service/gateway-handlers.js";

export interface InProcessCaller {
  /** The address the host resolved for the MCP request; the broker records it. */
  remoteAddress: string;
  /** Recorded by the broker's audit log with every token it hands out. */
  userAgent: string;
}

const service = gatewayV1.GatewayService;

/**
 * The tokens of one MCP request's credentialed calls, read through the gateway's own GetToken and
 * RefreshConnection handlers in process: the same broker calls, audit record and answers as a
 * REST call, without a loop through HTTP or a key of its own (the MCP request passed the key check
 * or its OAuth token was verified). A handler's error reaches the tool as the SDK's typed error
 * for the same REST answer. A token read is kept for the request, so the tool's own read after a
 * fetcher's is not a second broker call.
 */
export function createInProcessConnections(
  handlers: GatewayHandlers,
  caller: InProcessCaller,
  logger: Logger,
): ConnectionTokens {
  const contextValues = createContextValues().set(callerAddressKey, caller.remoteAddress);
  const headers = { "user-agent": caller.userAgent };
  const call = async <T>(connectionId: string, run: () => Promise<unknown>): Promise<T> => {
    try {
      return (await run()) as T;
    } catch (error) {
      const { status, body } = restError(normalizeHandlerError(error, logger, "MCP call failed"));
      throw gatewayErrorFor(status, body, connectionId);
    }
  };
  const tokens = new Map<string, Promise<ConnectionToken>>();
  const tokenKey = (connectionId: string, workspaceId = "") =>
    `${workspaceId}\u0000${connectionId}`;

  return {
    getToken(connectionId, { workspaceId = "", signal, bypassCache } = {}) {
      const key = tokenKey(connectionId, workspaceId);
      const kept = bypassCache ? undefined : tokens.get(key);
      if (kept) return kept;
      const pending = call<ConnectionToken>(connectionId, () =>
        callInProcess(
          service,
          service.method.getToken,
          handlers.getToken,
          { connectionId, workspaceId },
          { contextValues, headers, signal },
        ),
      );
      tokens.set(key, pending);
      pending.catch(() => {
        if (tokens.get(key) === pending) tokens.delete(key);
      });
      return pending;
    },
    refreshConnection(connectionId, { workspaceId = "", signal } = {}) {
      tokens.delete(tokenKey(connectionId, workspaceId));
      return call(connectionId, () =>
        callInProcess(
          service,
          service.method.refreshConnection,
          handlers.refreshConnection,
          { connectionId, workspaceId },
          { contextValues, headers, signal },
        ),
      );
    },
  };
}
