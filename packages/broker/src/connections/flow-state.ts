import { hasControlCharacter, invalidArgument } from "@atrium/kit";
import type { BrokerContext } from "../broker-context.js";
import { type FlowState, isAllowedReturnUrl } from "../oauth/state-token.js";
import type { ProviderRecord } from "../providers/provider-store.js";

export interface StartFlowRequest {
  providerId: string;
  workspaceId: string;
  returnUrl: string;
  scopes?: string[];
  redirectUri?: string;
}

/**
 * The signed state a consent flow (OAuth or SAML) carries through the provider and back: the
 * request checked, the provider's scopes and the broker's redirect URI filled in where absent.
 */
export function newFlowState(
  ctx: BrokerContext,
  kind: FlowState["kind"],
  request: StartFlowRequest,
  provider: ProviderRecord,
  extra: Partial<FlowState> = {},
): string {
  const { settings } = ctx;
  if (!request.workspaceId) throw invalidArgument("workspace_id is required");
  if (hasControlCharacter(request.returnUrl)) {
    throw invalidArgument("return_url must not contain control characters");
  }
  if (request.returnUrl && !isAllowedReturnUrl(request.returnUrl, settings.allowedReturnDomains)) {
    throw invalidArgument("return_url is not in an allowed return domain");
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
