import type { CallerContext } from "../audit/audit-log.js";
import type { BrokerContext } from "../broker-context.js";
import type { FlowState } from "../oauth/state-token.js";
import type { ProviderRecord } from "../providers/provider-store.js";
import type { ConnectionRecord } from "./connection-record.js";
import { connectionStore } from "./connection-store.js";
import { newFlowState, type StartFlowRequest } from "./flow-state.js";
import { completeOAuth, startOAuth } from "./oauth-consent.js";
import { refreshConnection } from "./refresh-connection.js";
import { type RevocationResult, revokeConnection } from "./revoke-connection.js";
import { captureStatic, type StaticCaptureRequest } from "./static-capture.js";
import { type NewConnection, storeConnection } from "./store-connection.js";
import { createTokenReader, type TokenReader } from "./token-read.js";
import { createTokenRefresher, type TokenRefresher } from "./token-refresher.js";

/** A connection's life: consent or capture, token reads, refresh, revocation. */
export interface ConnectionService extends TokenReader {
  readonly refresher: TokenRefresher;
  startOAuth(
    request: StartFlowRequest,
  ): Promise<{ authorizationUrl: string; state: string; expiresAt: Date }>;
  completeOAuth(
    params: URLSearchParams,
    caller: CallerContext,
  ): Promise<{ connection: ConnectionRecord; returnUrl: string }>;
  /** Stores a credential that completed a flow (SAML) or passed validation (static). */
  createConnection(input: NewConnection, caller: CallerContext): Promise<ConnectionRecord>;
  captureStatic(request: StaticCaptureRequest, caller: CallerContext): Promise<ConnectionRecord>;
  list(workspaceId?: string): Promise<ConnectionRecord[]>;
  get(id: string, workspaceId?: string): Promise<ConnectionRecord>;
  refresh(id: string, workspaceId: string | undefined): Promise<ConnectionRecord>;
  revoke(
    id: string,
    options: { workspaceId?: string; reason?: string; caller: CallerContext },
  ): Promise<RevocationResult>;
  newState(
    kind: FlowState["kind"],
    request: StartFlowRequest,
    provider: ProviderRecord,
    extra?: Partial<FlowState>,
  ): string;
}

export function createConnectionService(ctx: BrokerContext): ConnectionService {
  const refresher = createTokenRefresher(ctx);
  const reader = createTokenReader(ctx, refresher);
  return {
    refresher,
    newState: (kind, request, provider, extra) => newFlowState(ctx, kind, request, provider, extra),
    createConnection: (input, caller) => storeConnection(ctx, input, caller),
    startOAuth: (request) => startOAuth(ctx, request),
    completeOAuth: (params, caller) => completeOAuth(ctx, params, caller),
    captureStatic: (request, caller) => captureStatic(ctx, request, caller),
    list: (workspaceId) => connectionStore.list(ctx.sql, workspaceId),
    get: (id, workspaceId) => connectionStore.load(ctx.sql, id, workspaceId),
    token: reader.token,
    tokens: reader.tokens,
    refresh: (id, workspaceId) => refreshConnection(ctx, refresher, id, workspaceId),
    revoke: (id, options) => revokeConnection(ctx, { id, ...options }),
  };
}
