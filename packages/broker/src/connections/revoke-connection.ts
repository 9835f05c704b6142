import { connectionRevoked } from "@atrium/kit";
import { type CallerContext, writeAuditEvent } from "../audit/audit-log.js";
import type { BrokerContext } from "../broker-context.js";
import type { ProviderRecord } from "../providers/provider-store.js";
import { enqueueWebhookEvent } from "../webhooks/webhook-events.js";
import { connectionNotFound } from "./connection-errors.js";
import {
  type ConnectionRecord,
  type Credential,
  openCredential,
  type RevocationOutcome,
} from "./connection-record.js";
import { connectionStore } from "./connection-store.js";

export interface RevokeRequest {
  id: string;
  workspaceId?: string;
  reason?: string;
  caller: CallerContext;
}

export interface RevocationResult extends RevocationOutcome {
  connection_id: string;
}

/**
 * Revokes a connection. The row is held exclusively from the first read to the commit, so an
 * in-flight refresh, exchange or capture (which needs a shared lock and `revoked_at IS NULL`)
 * either finished before or is rejected after. The upstream RFC 7009 calls run inside that window
 * under their own deadline; the local statements have a separate lock and statement timeout, so a
 * slow provider never keeps the credential alive.
 */
export async function revokeConnection(
  ctx: BrokerContext,
  request: RevokeRequest,
): Promise<RevocationResult> {
  if (!request.id) throw connectionNotFound(request.id);
  const reason = request.reason ?? "";
  const target = await resolveUpstream(ctx, request.id);
  return ctx.sql.transaction(async (tx) => {
    const timeout = Math.max(1, Math.floor(ctx.settings.teardownTimeoutMs));
    await tx.query(`SET LOCAL lock_timeout = ${timeout}`);
    await tx.query(`SET LOCAL statement_timeout = ${timeout}`);
    const row = await connectionStore.lockForRevocation(tx, request.id);
    if (!row || (request.workspaceId && row.workspace_id !== request.workspaceId)) {
      throw connectionNotFound(request.id);
    }
    if (row.revoked_at && row.revocation) {
      return { connection_id: row.id, ...row.revocation };
    }

    const upstream = await revokeUpstream(ctx, target, row);
    const revokedAt = new Date();
    const outcome: RevocationOutcome = {
      token_deleted: true,
      provider_revoked: upstream.revoked,
      provider_revocation_error: upstream.error,
      reason,
      revoked_at: revokedAt.toISOString(),
    };
    await connectionStore.markRevoked(tx, row.id, revokedAt, outcome);
    const closed = await tx.query(
      `UPDATE broker_agent_sessions SET status = 'closed', closed_at = now(), close_reason = $2
        WHERE connection_id = $1 AND status = 'open'`,
      [row.id, connectionRevoked.spec.reason],
    );
    await writeAuditEvent(tx, {
      eventType: "connection.revoked",
      resourceId: row.id,
      caller: request.caller,
      data: {
        connection_id: row.id,
        workspace_id: row.workspace_id,
        provider_id: row.provider_id,
        reason,
        token_deleted: true,
        provider_revoked: upstream.revoked,
        provider_revocation_error: upstream.error,
        agent_sessions_closed: closed.rowCount,
      },
    });
    await enqueueWebhookEvent(tx, "connection.revoked", {
      connection_id: row.id,
      workspace_id: row.workspace_id,
      provider_id: row.provider_id,
      reason,
      provider_revoked: upstream.revoked,
    });
    return { connection_id: row.id, ...outcome };
  });
}

/** Where and how to revoke upstream, or why that cannot be done. */
type UpstreamTarget = { provider: ProviderRecord; secret: string | undefined } | { error: string };

/**
 * Resolved before the transaction opens: PGlite has one connection, so the provider read (through
 * the store's own `Sql`) would wait forever inside it; and discovery or an external secret
 * backend should not hold the row lock either. A failure here is recorded as the upstream
 * outcome; the local teardown still happens.
 */
async function resolveUpstream(
  ctx: BrokerContext,
  id: string,
): Promise<UpstreamTarget | undefined> {
  const connection = await connectionStore.upstreamOf(ctx.sql, id);
  // Unknown rows are reported by the transaction; provider_id and auth_type never change.
  if (connection?.auth_type !== "oauth2") return undefined;
  try {
    const provider = await ctx.providers.get(connection.provider_id);
    if (!(await ctx.oauth.revocationEndpoint(provider))) {
      return { error: "provider advertises no revocation endpoint" };
    }
    return { provider, secret: await ctx.providers.clientSecret(provider) };
  } catch (error) {
    const message = error instanceof Error ? error.message : "provider could not be resolved";
    ctx.logger.warn({ connectionId: id, reason: message }, "upstream revocation failed");
    return { error: message };
  }
}

/** RFC 7009: refresh token first (revokes the grant at most providers), then the access token. */
async function revokeUpstream(
  ctx: BrokerContext,
  target: UpstreamTarget | undefined,
  row: ConnectionRecord,
): Promise<{ revoked: boolean; error: string }> {
  if (row.auth_type !== "oauth2") {
    return { revoked: false, error: `${row.auth_type} credentials have no upstream revocation` };
  }
  // Only when the row appeared between the look-up and the lock.
  if (!target) return { revoked: false, error: "provider could not be resolved" };
  if ("error" in target) return { revoked: false, error: target.error };
  let credential: Credential;
  try {
    credential = openCredential(ctx.vault, row);
  } catch {
    return { revoked: false, error: "stored credential could not be decrypted" };
  }
  const signal = AbortSignal.timeout(ctx.settings.revocationTimeoutMs);
  try {
    const tokens: [string | undefined, "refresh_token" | "access_token"][] = [
      [credential.refresh_token, "refresh_token"],
      [credential.access_token, "access_token"],
    ];
    for (const [token, hint] of tokens) {
      if (token) await ctx.oauth.revoke(target.provider, target.secret, token, hint, signal);
    }
    return { revoked: true, error: "" };
  } catch (error) {
    const message = signal.aborted
      ? `upstream revocation timed out after ${ctx.settings.revocationTimeoutMs} ms`
      : error instanceof Error
        ? error.message
        : "upstream revocation failed";
    ctx.logger.warn({ connectionId: row.id, reason: message }, "upstream revocation failed");
    return { revoked: false, error: message };
  }
}
