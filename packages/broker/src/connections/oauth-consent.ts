import { invalidArgument, providerUnavailable } from "@atrium/kit";
import * as oauth from "oauth4webapi";
import type { CallerContext } from "../audit/audit-log.js";
import type { BrokerContext } from "../broker-context.js";
import { ProviderRejectedError, type TokenSet } from "../oauth/oauth-client.js";
import type { FlowState } from "../oauth/state-token.js";
import type { ConnectionRecord } from "./connection-record.js";
import { newFlowState, type StartFlowRequest } from "./flow-state.js";
import { auditFailure, storeConnection } from "./store-connection.js";

/** The provider's consent URL for an OAuth flow (PKCE, and a nonce when OIDC). */
export async function startOAuth(
  ctx: BrokerContext,
  request: StartFlowRequest,
): Promise<{ authorizationUrl: string; state: string; expiresAt: Date }> {
  const provider = await ctx.providers.get(request.providerId);
  if (provider.auth_type !== "oauth2")
    throw invalidArgument(`provider ${provider.id} is not an oauth2 provider`);
  const codeVerifier = oauth.generateRandomCodeVerifier();
  const nonce = oauth.generateRandomNonce();
  const state = newFlowState(ctx, "oauth2", request, provider, { codeVerifier, nonce });
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
}

/** The provider's callback: the code exchanged for tokens, stored as a new connection. */
export async function completeOAuth(
  ctx: BrokerContext,
  params: URLSearchParams,
  caller: CallerContext,
): Promise<{ connection: ConnectionRecord; returnUrl: string }> {
  let state: FlowState;
  try {
    state = ctx.states.decode(params.get("state") ?? "");
  } catch (error) {
    throw invalidArgument(`invalid state: ${(error as Error).message}`);
  }
  if (state.kind !== "oauth2") throw invalidArgument("state does not belong to an OAuth flow");
  const provider = await ctx.providers.get(state.providerId);
  const failure = (error: string) =>
    auditFailure(ctx, "token.exchange_failed", provider.id, caller, {
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
      throw invalidArgument(`authorization failed: ${error.oauthError}`);
    }
    await failure(providerUnavailable.spec.reason);
    throw providerUnavailable({ detail: `code exchange with provider ${provider.name} failed` });
  }
  const connection = await storeConnection(
    ctx,
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
}
