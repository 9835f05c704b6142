import { randomUUID } from "node:crypto";
import { AtriumError, Code, hasControlCharacter } from "@atrium/kit";
import * as oauth from "oauth4webapi";
import { type CallerContext, createAuditWriter, writeAuditEvent } from "../audit/audit-log.js";
import type { BrokerContext } from "../broker-context.js";
import { ProviderRejectedError, type TokenSet } from "../oauth/oauth-client.js";
import { type FlowState, isAllowedReturnUrl } from "../oauth/state-token.js";
import type { ProviderRecord } from "../providers/provider-store.js";
import { enqueueWebhookEvent } from "../webhooks/webhook-events.js";
import {
  connectionNotFound,
  invalidCredentials,
  providerNotValidatable,
  providerUnavailable,
} from "./connection-errors.js";
import {
  type ConnectionRecord,
  type Credential,
  openCredential,
  sealCredential,
} from "./connection-record.js";
import {
  type ConnectionWithProviderParams,
  connectionStore,
  expiresSoon,
  pickConnection,
} from "./connection-store.js";
import {
  type CredentialStrategy,
  credentialStrategy,
  DEFAULT_API_KEY_HEADER,
  DEFAULT_QUERY_PARAM,
} from "./credential-strategy.js";
import { type RevocationResult, revokeConnection } from "./revoke-connection.js";
import {
  assertUsable,
  createTokenRefresher,
  type TokenRefresher,
  tokenSchedule,
} from "./token-refresher.js";

export interface StartFlowRequest {
  providerId: string;
  workspaceId: string;
  returnUrl: string;
  scopes?: string[];
  redirectUri?: string;
}

export interface TokenView {
  connection: ConnectionRecord;
  credential: Credential;
  strategy: CredentialStrategy;
}

/** One token read of a batch: the connection, the workspace it must be in, who asks. */
export interface TokenRead {
  id: string;
  workspaceId?: string;
  caller: CallerContext;
}

export interface ConnectionService {
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
  captureStatic(
    request: {
      providerId: string;
      workspaceId: string;
      apiKey?: string;
      username?: string;
      password?: string;
    },
    caller: CallerContext,
  ): Promise<ConnectionRecord>;
  list(workspaceId?: string): Promise<ConnectionRecord[]>;
  get(id: string, workspaceId?: string): Promise<ConnectionRecord>;
  token(id: string, workspaceId: string | undefined, caller: CallerContext): Promise<TokenView>;
  /**
   * Several reads whose connections are loaded by one query; each is then served as `token`
   * serves it (checked, refreshed, audited) and settles on its own, in order.
   */
  tokens(reads: TokenRead[]): Promise<PromiseSettledResult<TokenView>[]>;
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

export interface NewConnection {
  provider: ProviderRecord;
  workspaceId: string;
  credential: Credential;
  scopes: string[];
  subject: string;
  tokens?: Pick<TokenSet, "expires_in" | "refresh_token">;
  method: "oauth2" | "saml" | "static";
}

const invalid = (message: string) => new AtriumError(Code.InvalidArgument, message);

/**
 * Longest static credential field the broker presents to a provider, in bytes. The field becomes
 * a header or query value there, and common servers refuse a header section over 8 KiB (431)
 * before the provider's code runs; no real API key or password comes near this.
 */
export const maxCredentialFieldBytes = 4096;

function checkCredentialSizes(credential: Credential) {
  for (const [name, value] of Object.entries(credential)) {
    if (typeof value === "string" && Buffer.byteLength(value) > maxCredentialFieldBytes) {
      throw invalid(`${name} is longer than ${maxCredentialFieldBytes} bytes`);
    }
  }
}

export function createConnectionService(ctx: BrokerContext): ConnectionService {
  const refresher = createTokenRefresher(ctx);
  const { sql, settings } = ctx;
  const retrievals = createAuditWriter(sql);

  /** A loaded connection's credential, refreshed first when it expires soon; audited. */
  async function serveToken(
    loaded: ConnectionWithProviderParams,
    caller: CallerContext,
  ): Promise<TokenView> {
    let { connection } = loaded;
    const id = connection.id;
    assertUsable(connection);
    let credential: Credential | undefined;
    if (connection.auth_type === "oauth2" && expiresSoon(connection)) {
      ({ connection, credential } = await refresher.refresh(connection, { force: false }));
      assertUsable(connection);
    }
    try {
      credential ??= openCredential(ctx.vault, connection);
    } catch (error) {
      throw new AtriumError(Code.Internal, `credential of ${id} cannot be opened`, {
        cause: error,
      });
    }
    await retrievals.write({
      eventType: "token.retrieved",
      resourceId: id,
      caller,
      data: {
        connection_id: id,
        workspace_id: connection.workspace_id,
        provider_id: connection.provider_id,
      },
    });
    return {
      connection,
      credential,
      strategy: credentialStrategy(connection.auth_type, loaded.providerParams),
    };
  }

  function newState(
    kind: FlowState["kind"],
    request: StartFlowRequest,
    provider: ProviderRecord,
    extra: Partial<FlowState> = {},
  ): string {
    if (!request.workspaceId) throw invalid("workspace_id is required");
    if (hasControlCharacter(request.returnUrl)) {
      throw invalid("return_url must not contain control characters");
    }
    if (
      request.returnUrl &&
      !isAllowedReturnUrl(request.returnUrl, settings.allowedReturnDomains)
    ) {
      throw invalid("return_url is not in an allowed return domain");
    }
    return ctx.states.encode({
      kind,
      providerId: provider.id,
      workspaceId: request.workspaceId,
      returnUrl: request.returnUrl,
      redirectUri: request.redirectUri || settings.defaultRedirectUri,
      scopes: request.scopes?.length ? request.scopes : provider.scopes,
      expiresAt: Date.now() + settings.stateTtlSeconds * 1000,
      ...extra,
    });
  }

  async function createConnection(input: NewConnection, caller: CallerContext) {
    const id = randomUUID();
    const schedule = input.tokens ? tokenSchedule(input.tokens, settings) : undefined;
    try {
      return await sql.transaction(async (tx) => {
        const connection = await connectionStore.insert(tx, {
          id,
          workspaceId: input.workspaceId,
          providerId: input.provider.id,
          authType: input.provider.auth_type,
          credentialEnc: sealCredential(ctx.vault, id, input.credential),
          scopes: input.scopes,
          subject: input.subject,
          expiresAt: schedule?.expiresAt ?? null,
          refreshDueAt: schedule?.refreshDueAt ?? null,
        });
        await writeAuditEvent(tx, {
          eventType: "connection.created",
          resourceId: id,
          caller,
          data: {
            connection_id: id,
            workspace_id: input.workspaceId,
            provider_id: input.provider.id,
            provider_name: input.provider.name,
            method: input.method,
          },
        });
        await enqueueWebhookEvent(tx, "connection.created", {
          connection_id: id,
          workspace_id: input.workspaceId,
          provider_id: input.provider.id,
          provider_name: input.provider.name,
          auth_type: input.provider.auth_type,
          status: connection.status,
        });
        return connection;
      });
    } catch (error) {
      await auditFailure("token.storage_failed", id, caller, {
        provider_id: input.provider.id,
        workspace_id: input.workspaceId,
        stage: input.method,
      });
      ctx.logger.error(
        {
          providerId: input.provider.id,
          reason: error instanceof Error ? error.message : "unknown",
        },
        "credential could not be stored",
      );
      throw new AtriumError(Code.Internal, "credential could not be stored", { cause: error });
    }
  }

  async function auditFailure(
    eventType: "token.exchange_failed" | "token.storage_failed",
    resourceId: string,
    caller: CallerContext,
    data: Record<string, unknown>,
  ) {
    try {
      await sql.transaction((tx) => writeAuditEvent(tx, { eventType, resourceId, caller, data }));
    } catch (error) {
      ctx.logger.error({ err: error, eventType }, "audit event could not be written");
    }
  }

  async function validateStatic(provider: ProviderRecord, credential: Credential): Promise<void> {
    const endpoint = provider.user_info_endpoint || provider.api_base_url;
    if (!endpoint) throw providerNotValidatable(provider.id);
    const headers: Record<string, string> = { accept: "application/json" };
    const url = new URL(endpoint);
    // Presented as the SDKs will present it: a key that passes here works when injected.
    const strategy = credentialStrategy(provider.auth_type, provider.params);
    if (provider.auth_type === "basic_auth") {
      const pair = `${credential.username ?? ""}:${credential.password ?? ""}`;
      headers.authorization = `Basic ${Buffer.from(pair, "utf8").toString("base64")}`;
    } else if (strategy.type === "query_param") {
      url.searchParams.set(strategy.paramName || DEFAULT_QUERY_PARAM, credential.api_key ?? "");
    } else {
      headers[strategy.headerName || DEFAULT_API_KEY_HEADER] =
        `${strategy.headerPrefix}${credential.api_key ?? ""}`;
    }
    let response: Response;
    try {
      response = await fetch(url, {
        headers,
        signal: AbortSignal.timeout(10_000),
        redirect: "manual",
      });
      await response.body?.cancel();
    } catch {
      throw providerUnavailable(
        `provider ${provider.name} could not be reached to validate the credential`,
      );
    }
    if (response.status === 401 || response.status === 403)
      throw invalidCredentials(response.status);
    // The request was too large for the provider only because of what the caller sent: the
    // caller's fault, not an outage of the provider.
    if (response.status === 413 || response.status === 414 || response.status === 431) {
      throw invalid(
        `provider ${provider.name} refused the credential as too large (answered ${response.status})`,
      );
    }
    if (!response.ok) {
      throw providerUnavailable(
        `provider ${provider.name} answered ${response.status} while validating`,
      );
    }
  }

  return {
    refresher,
    newState,
    createConnection,

    async startOAuth(request) {
      const provider = await ctx.providers.get(request.providerId);
      if (provider.auth_type !== "oauth2")
        throw invalid(`provider ${provider.id} is not an oauth2 provider`);
      const codeVerifier = oauth.generateRandomCodeVerifier();
      const nonce = oauth.generateRandomNonce();
      const state = newState("oauth2", request, provider, { codeVerifier, nonce });
      const decoded = ctx.states.decode(state);
      const url = await ctx.oauth.authorizationUrl(provider, {
        redirectUri: decoded.redirectUri,
        scopes: decoded.scopes,
        state,
        codeChallenge: await oauth.calculatePKCECodeChallenge(codeVerifier),
        // A nonce is only meaningful when an id_token can come back.
        nonce: decoded.scopes.includes("openid") ? nonce : undefined,
      });
      return { authorizationUrl: url.toString(), state, expiresAt: new Date(decoded.expiresAt) };
    },

    async completeOAuth(params, caller) {
      let state: FlowState;
      try {
        state = ctx.states.decode(params.get("state") ?? "");
      } catch (error) {
        throw invalid(`invalid state: ${(error as Error).message}`);
      }
      if (state.kind !== "oauth2") throw invalid("state does not belong to an OAuth flow");
      const provider = await ctx.providers.get(state.providerId);
      const failure = (error: string) =>
        auditFailure("token.exchange_failed", provider.id, caller, {
          provider_id: provider.id,
          workspace_id: state.workspaceId,
          error,
        });
      const usesNonce = state.scopes.includes("openid");
      let tokens: TokenSet;
      try {
        const secret = await ctx.providers.clientSecret(provider);
        tokens = await ctx.oauth.exchangeCode(provider, secret, {
          callbackParams: params,
          redirectUri: state.redirectUri,
          codeVerifier: state.codeVerifier ?? "",
          nonce: usesNonce ? state.nonce : undefined,
        });
      } catch (error) {
        if (error instanceof ProviderRejectedError) {
          await failure(error.oauthError);
          throw invalid(`authorization failed: ${error.oauthError}`);
        }
        await failure("provider_unavailable");
        throw providerUnavailable(`code exchange with provider ${provider.name} failed`);
      }
      const connection = await createConnection(
        {
          provider,
          workspaceId: state.workspaceId,
          credential: {
            access_token: tokens.access_token,
            token_type: tokens.token_type,
            refresh_token: tokens.refresh_token,
            id_token: tokens.id_token,
          },
          scopes: tokens.scope ? tokens.scope.split(" ").filter(Boolean) : state.scopes,
          subject: tokens.subject ?? "",
          tokens,
          method: "oauth2",
        },
        caller,
      );
      return { connection, returnUrl: state.returnUrl };
    },

    async captureStatic(request, caller) {
      if (!request.workspaceId) throw invalid("workspace_id is required");
      const provider = await ctx.providers.get(request.providerId);
      let credential: Credential;
      if (provider.auth_type === "api_key") {
        if (!request.apiKey) throw invalid("api_key is required");
        credential = { api_key: request.apiKey };
      } else if (provider.auth_type === "basic_auth") {
        if (!request.username || !request.password)
          throw invalid("username and password are required");
        credential = { username: request.username, password: request.password };
      } else {
        throw invalid(`provider ${provider.id} (${provider.auth_type}) takes no static credential`);
      }
      checkCredentialSizes(credential);
      // Fail closed: nothing is stored unless the provider accepted the credential.
      await validateStatic(provider, credential);
      return createConnection(
        {
          provider,
          workspaceId: request.workspaceId,
          credential,
          scopes: [],
          subject: request.username ?? "",
          method: "static",
        },
        caller,
      );
    },

    list: (workspaceId) => connectionStore.list(sql, workspaceId),

    get: (id, workspaceId) => connectionStore.load(sql, id, workspaceId),

    async token(id, workspaceId, caller) {
      // Loaded once, with what picks the strategy; a refresh hands back the stored row and the
      // credential it sealed.
      return serveToken(await connectionStore.loadWithProviderParams(sql, id, workspaceId), caller);
    },

    async tokens(reads) {
      const found = await connectionStore.loadManyWithProviderParams(sql, [
        ...new Set(reads.map((read) => read.id)),
      ]);
      return Promise.allSettled(
        reads.map(async (read) =>
          serveToken(pickConnection(found, read.id, read.workspaceId), read.caller),
        ),
      );
    },

    async refresh(id, workspaceId) {
      const row = await connectionStore.load(sql, id, workspaceId);
      const { connection } = await refresher.refresh(row, { force: true });
      assertUsable(connection);
      return connection;
    },

    async revoke(id, options) {
      if (!id) throw connectionNotFound(id);
      return revokeConnection(ctx, { id, ...options });
    },
  };
}
