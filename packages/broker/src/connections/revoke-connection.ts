import { type CallerContext, writeAuditEvent } from "../audit/audit-log.js";
import type { BrokerContext } from "../broker-context.js";
import { connectionNotFound } from "./connection-errors.js";
import {
  type ConnectionRecord,
  type Credential,
  openCredential,
  type RevocationOutcome,
} from "./connection-record.js";

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
  const reason = request.reason ?? "";
  return ctx.sql.transaction(async (tx) => {
    const timeout = Math.max(1, Math.floor(ctx.settings.teardownTimeoutMs));
    await tx.query(`SET LOCAL lock_timeout = ${timeout}`);
    await tx.query(`SET LOCAL statement_timeout = ${timeout}`);
    const { rows } = await tx.query<ConnectionRecord>(
      "SELECT * FROM broker_connections WHERE id = $1 FOR UPDATE",
      [request.id],
    );
    const row = rows[0];
    if (!row || (request.workspaceId && row.workspace_id !== request.workspaceId)) {
      throw connectionNotFound(request.id);
    }
    if (row.revoked_at && row.revocation) {
      return { connection_id: row.id, ...row.revocation };
    }

    const upstream = await revokeUpstream(ctx, row);
    const revokedAt = new Date();
    const outcome: RevocationOutcome = {
      token_deleted: true,
      provider_revoked: upstream.revoked,
      provider_revocation_error: upstream.error,
      reason,
      revoked_at: revokedAt.toISOString(),
    };
    await tx.query(
      `UPDATE broker_connections
          SET status = 'revoked', revoked_at = $2, credential_enc = NULL, revocation = $3,
              refresh_due_at = NULL, lease_owner = NULL, lease_until = NULL,
              health_status = 'unhealthy', updated_at = now()
        WHERE id = $1`,
      [row.id, revokedAt, JSON.stringify(outcome)],
    );
    const closed = await tx.query(
      `UPDATE broker_agent_sessions SET status = 'closed', closed_at = now(), close_reason = 'connection_revoked'
        WHERE connection_id = $1 AND status = 'open'`,
      [row.id],
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
    return { connection_id: row.id, ...outcome };
  });
}

/** RFC 7009: refresh token first (revokes the grant at most providers), then the access token. */
async function revokeUpstream(
  ctx: BrokerContext,
  row: ConnectionRecord,
): Promise<{ revoked: boolean; error: string }> {
  if (row.auth_type !== "oauth2") {
    return { revoked: false, error: `${row.auth_type} credentials have no upstream revocation` };
  }
  let credential: Credential;
  try {
    credential = openCredential(ctx.vault, row);
  } catch {
    return { revoked: false, error: "stored credential could not be decrypted" };
  }
  const signal = AbortSignal.timeout(ctx.settings.revocationTimeoutMs);
  try {
    const provider = await ctx.providers.get(row.provider_id);
    const endpoint = await ctx.oauth.revocationEndpoint(provider);
    if (!endpoint) return { revoked: false, error: "provider advertises no revocation endpoint" };
    const secret = await ctx.providers.clientSecret(provider);
    const tokens: [string | undefined, "refresh_token" | "access_token"][] = [
      [credential.refresh_token, "refresh_token"],
      [credential.access_token, "access_token"],
    ];
    for (const [token, hint] of tokens) {
      if (token) await ctx.oauth.revoke(provider, secret, token, hint, signal);
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
