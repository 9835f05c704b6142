import { type Connection, type GatewayClient, GatewayError } from "@atrium/sdk";
import type { PendingItem } from "../kernel/pending-item.js";

/** What finding a connection and asking for consent use of the gateway. */
export type ConsentGateway = Pick<
  GatewayClient,
  "getConnection" | "listConnections" | "startConnection"
>;

/** A provider's connection a step needs, in the broker workspace of the step. */
export interface ProviderNeed {
  /** The broker provider id. */
  provider: string;
  /** The broker workspace whose connections the step uses (`context.workspace_id`). */
  workspaceId?: string;
  /** What the connection is for, said in the pending item. */
  purpose: string;
  signal?: AbortSignal;
}

export type ConnectionAnswer = { connectionId: string } | { pending: PendingItem };

/**
 * The newest active connection of a provider in a workspace created after `since` (when
 * given); what a consent for it produced, or what the step can use without one.
 */
export function newestActive(
  connections: Connection[],
  provider: string,
  since?: Date,
): Connection | undefined {
  const created = (c: Connection) => Date.parse(c.created_at ?? "") || 0;
  return connections
    .filter((c) => c.provider_id === provider && c.status === "active")
    .filter((c) => since === undefined || created(c) >= since.getTime())
    .sort((a, b) => created(b) - created(a))[0];
}

/**
 * The pending item that asks a person to connect `provider`: a `consent` item whose URL is the
 * gateway's own connect flow (POST /v1/connect) for the workspace, or a `credentials` item
 * saying why there can be no such URL (an unknown provider, one without OAuth, no workspace).
 */
export async function askForConsent(
  gateway: ConsentGateway,
  provider: string,
  workspaceId: string | undefined,
  why: string,
): Promise<PendingItem> {
  if (!workspaceId) {
    return {
      kind: "credentials",
      detail: `${why}, and connecting provider ${provider} needs the broker workspace: set context.workspace_id`,
    };
  }
  try {
    const started = await gateway.startConnection({
      provider_id: provider,
      workspace_id: workspaceId,
    });
    return {
      kind: "consent",
      provider,
      authorization_url: started.authorization_url,
      detail: `${why}: open authorization_url to connect provider ${provider} for workspace ${workspaceId}; the step goes on by itself once the connection is active${started.expires_at ? ` (the link works until ${started.expires_at})` : ""}`,
    };
  } catch (error) {
    if (!(error instanceof GatewayError) || error.status >= 500) throw error;
    const reason =
      error.status === 404
        ? `provider ${provider} is not registered with the credential broker`
        : `the gateway cannot start a consent for provider ${provider} (HTTP ${error.status}: ${error.code ?? error.message})`;
    return {
      kind: "credentials",
      detail: `${why}, and ${reason}: register or capture a connection, then resume with its connection_id`,
    };
  }
}

/** The newest active connection of the provider, or the consent that makes one. */
export async function connectionFor(
  gateway: ConsentGateway,
  need: ProviderNeed,
): Promise<ConnectionAnswer> {
  const { provider, workspaceId, signal } = need;
  if (workspaceId) {
    const active = newestActive(await gateway.listConnections({ workspaceId, signal }), provider);
    if (active) return { connectionId: active.id };
  }
  const why = `there is no active connection to provider ${provider} to ${need.purpose}`;
  return { pending: await askForConsent(gateway, provider, workspaceId, why) };
}

/**
 * What repairs a named connection that cannot be used (attention, revoked, failed, missing, its
 * credential refused): a consent for its provider (the request's, or the connection's own) when
 * there is one to ask for, else the `credentials` item that says what a person must do.
 */
export async function repairFor(
  gateway: ConsentGateway,
  connectionId: string,
  need: { provider?: string; workspaceId?: string; signal?: AbortSignal },
  why: string,
): Promise<PendingItem> {
  let provider = need.provider;
  if (!provider) {
    try {
      const named = await gateway.getConnection(connectionId, {
        workspaceId: need.workspaceId,
        signal: need.signal,
      });
      provider = named.provider_id || undefined;
    } catch (error) {
      if (!(error instanceof GatewayError) || error.status >= 500) throw error;
    }
  }
  if (!provider) return { kind: "credentials", detail: why };
  return askForConsent(gateway, provider, need.workspaceId, why);
}
