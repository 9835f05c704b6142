import { AtriumError, Code, type SqlExecutor } from "@atrium/kit";
import { SYSTEM_CALLER, writeAuditEvent } from "../audit/audit-log.js";
import type { BrokerContext } from "../broker-context.js";
import { ProviderRejectedError, type TokenSet } from "../oauth/oauth-client.js";
import {
  attentionRequired,
  connectionNotActive,
  connectionNotFound,
  connectionRevoked,
  providerUnavailable,
} from "./connection-errors.js";
import {
  type ConnectionRecord,
  type Credential,
  openCredential,
  sealCredential,
} from "./connection-record.js";

/** When a token set expires and when it should be refreshed. */
export function tokenSchedule(
  tokens: Pick<TokenSet, "expires_in" | "refresh_token">,
  settings: BrokerContext["settings"],
  now = Date.now(),
): { expiresAt: Date; refreshDueAt: Date | null } {
  // A zero or negative expires_in is treated as absent: refreshing it would never end.
  const lifetime =
    tokens.expires_in !== undefined && tokens.expires_in > 0
      ? tokens.expires_in
      : settings.defaultTokenLifetimeSeconds;
  const expiresAt = new Date(now + lifetime * 1000);
  // Short-lived tokens are refreshed at half their life rather than never leaving the due window.
  const skew = Math.min(settings.refreshSkewSeconds, lifetime / 2);
  const refreshDueAt = tokens.refresh_token ? new Date(expiresAt.getTime() - skew * 1000) : null;
  return { expiresAt, refreshDueAt };
}

/** Throws the spec's error for a connection that cannot hand out or refresh credentials. */
export function assertUsable(row: ConnectionRecord): void {
  if (row.revoked_at || row.status === "revoked") throw connectionRevoked(row.id);
  if (row.status === "attention") throw attentionRequired(row.id);
  if (row.status !== "active") throw connectionNotActive(row.id, row.status);
}

export async function loadConnection(
  sql: SqlExecutor,
  id: string,
  workspaceId?: string,
): Promise<ConnectionRecord> {
  const { rows } = await sql.query<ConnectionRecord>(
    "SELECT * FROM broker_connections WHERE id = $1",
    [id],
  );
  const row = rows[0];
  if (!row || (workspaceId && row.workspace_id !== workspaceId)) throw connectionNotFound(id);
  return row;
}

/**
 * The credential write rule: a shared lock on the row and `revoked_at IS NULL`, so a write that
 * loses a race with a revocation (which holds the row exclusively) sees the revocation and fails.
 */
export async function lockForCredentialWrite(
  tx: SqlExecutor,
  id: string,
): Promise<ConnectionRecord> {
  const { rows } = await tx.query<ConnectionRecord>(
    "SELECT * FROM broker_connections WHERE id = $1 FOR SHARE",
    [id],
  );
  const row = rows[0];
  if (!row) throw connectionNotFound(id);
  if (row.revoked_at) throw connectionRevoked(id);
  return row;
}

export type RefreshOutcome = "refreshed" | "refreshed_elsewhere" | "not_due";

export interface TokenRefresher {
  /**
   * Refreshes one connection, at most once at a time cluster-wide. `force` refreshes even when the
   * token is fresh (explicit POST /refresh); otherwise only an expired or due token is refreshed.
   */
  refresh(id: string, options: { force: boolean }): Promise<RefreshOutcome>;
  /** Refreshes a row whose lease this instance already holds (the refresh loop's claims). */
  refreshClaimed(row: ConnectionRecord): Promise<RefreshOutcome>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function createTokenRefresher(ctx: BrokerContext): TokenRefresher {
  const inFlight = new Map<string, Promise<RefreshOutcome>>();
  const { sql, settings, instanceId } = ctx;

  const isDue = (row: ConnectionRecord, now = Date.now()) =>
    row.refresh_due_at !== null && row.refresh_due_at.getTime() <= now;
  const isExpired = (row: ConnectionRecord, now = Date.now()) =>
    row.expires_at !== null && row.expires_at.getTime() <= now + 5_000;

  async function claim(id: string): Promise<ConnectionRecord | undefined> {
    const { rows } = await sql.query<ConnectionRecord>(
      `UPDATE broker_connections
          SET lease_owner = $2, lease_until = now() + make_interval(secs => $3)
        WHERE id = $1 AND revoked_at IS NULL AND status = 'active'
          AND (lease_until IS NULL OR lease_until < now())
        RETURNING *`,
      [id, instanceId, settings.leaseSeconds],
    );
    return rows[0];
  }

  async function release(tx: SqlExecutor, id: string): Promise<void> {
    await tx.query(
      "UPDATE broker_connections SET lease_owner = NULL, lease_until = NULL WHERE id = $1 AND lease_owner = $2",
      [id, instanceId],
    );
  }

  /** Another instance holds the lease: wait for it to finish, then report what it did. */
  async function awaitOtherInstance(id: string): Promise<RefreshOutcome> {
    const deadline = Date.now() + settings.leaseSeconds * 1000;
    for (;;) {
      const row = await loadConnection(sql, id);
      assertUsable(row);
      if (!row.lease_until || row.lease_until.getTime() < Date.now()) return "refreshed_elsewhere";
      if (Date.now() > deadline) {
        throw new AtriumError(Code.Unavailable, `connection ${id} is being refreshed elsewhere`);
      }
      await sleep(50);
    }
  }

  async function perform(row: ConnectionRecord): Promise<RefreshOutcome> {
    let credential: Credential;
    try {
      credential = openCredential(ctx.vault, row);
    } catch (error) {
      await release(sql, row.id);
      throw new AtriumError(Code.Internal, `connection ${row.id} credential cannot be opened`, {
        cause: error,
      });
    }
    if (!credential.refresh_token) {
      // Nothing to refresh with: a human has to consent again.
      await markAttention(row, "no_refresh_token", 0);
      throw attentionRequired(row.id);
    }
    let tokens: TokenSet;
    try {
      const provider = await ctx.providers.get(row.provider_id);
      const secret = await ctx.providers.clientSecret(provider);
      tokens = await ctx.oauth.refresh(provider, secret, credential.refresh_token);
    } catch (error) {
      if (error instanceof ProviderRejectedError) {
        await markAttention(row, error.oauthError, error.status);
        throw attentionRequired(row.id);
      }
      await markTransientFailure(row, error);
      if (error instanceof AtriumError) throw error;
      throw providerUnavailable(`refresh of connection ${row.id} failed; will retry`);
    }
    const next: Credential = {
      ...credential,
      access_token: tokens.access_token,
      token_type: tokens.token_type,
      // Providers that do not rotate omit refresh_token: keep the one we have.
      refresh_token: tokens.refresh_token ?? credential.refresh_token,
      id_token: tokens.id_token ?? credential.id_token,
    };
    const schedule = tokenSchedule({ ...tokens, refresh_token: next.refresh_token }, settings);
    try {
      await sql.transaction(async (tx) => {
        await lockForCredentialWrite(tx, row.id);
        const { rowCount } = await tx.query(
          `UPDATE broker_connections
              SET credential_enc = $2, expires_at = $3, refresh_due_at = $4,
                  last_refreshed_at = now(), refresh_count = refresh_count + 1,
                  refresh_failures = 0, health_status = 'healthy',
                  scopes = CASE WHEN $5::text IS NULL THEN scopes ELSE string_to_array($5::text, ' ') END,
                  lease_owner = NULL, lease_until = NULL, updated_at = now()
            WHERE id = $1 AND revoked_at IS NULL`,
          [
            row.id,
            sealCredential(ctx.vault, row.id, next),
            schedule.expiresAt,
            schedule.refreshDueAt,
            tokens.scope ?? null,
          ],
        );
        if (rowCount !== 1) throw connectionRevoked(row.id);
      });
    } catch (error) {
      if (error instanceof AtriumError && error.code === Code.FailedPrecondition) throw error;
      await recordStorageFailure(row, error);
      throw new AtriumError(Code.Internal, `refreshed token of ${row.id} could not be stored`, {
        cause: error,
      });
    }
    return "refreshed";
  }

  async function markAttention(row: ConnectionRecord, oauthError: string, status: number) {
    await sql.transaction(async (tx) => {
      try {
        await lockForCredentialWrite(tx, row.id);
      } catch {
        return; // revoked meanwhile: revocation wins, nothing to mark
      }
      await tx.query(
        `UPDATE broker_connections
            SET status = 'attention', health_status = 'unhealthy', lease_owner = NULL,
                lease_until = NULL, refresh_due_at = NULL, updated_at = now()
          WHERE id = $1 AND revoked_at IS NULL`,
        [row.id],
      );
      await writeAuditEvent(tx, {
        eventType: "token.refresh_fatal",
        resourceId: row.id,
        caller: SYSTEM_CALLER,
        data: {
          connection_id: row.id,
          provider_id: row.provider_id,
          workspace_id: row.workspace_id,
          error: oauthError,
          provider_status: status,
        },
      });
    });
    ctx.logger.warn(
      { connectionId: row.id, error: oauthError },
      "refresh rejected by provider; connection needs attention",
    );
  }

  async function markTransientFailure(row: ConnectionRecord, error: unknown) {
    const failures = row.refresh_failures + 1;
    // Exponential backoff with full jitter, capped at 15 minutes.
    const backoffMs = Math.random() * Math.min(900_000, 1_000 * 2 ** Math.min(failures, 10));
    const failed = failures >= settings.maxRefreshFailures;
    await sql.query(
      `UPDATE broker_connections
          SET refresh_failures = $2, health_status = $3, status = $4,
              refresh_due_at = now() + make_interval(secs => $5),
              lease_owner = NULL, lease_until = NULL, updated_at = now()
        WHERE id = $1 AND revoked_at IS NULL`,
      [
        row.id,
        failures,
        failed ? "unhealthy" : "degraded",
        failed ? "failed" : "active",
        backoffMs / 1000,
      ],
    );
    ctx.logger.warn(
      {
        connectionId: row.id,
        failures,
        reason: error instanceof Error ? error.message : "unknown",
      },
      "token refresh failed; retrying with backoff",
    );
  }

  async function recordStorageFailure(row: ConnectionRecord, error: unknown) {
    try {
      await sql.transaction(async (tx) => {
        await release(tx, row.id);
        await writeAuditEvent(tx, {
          eventType: "token.storage_failed",
          resourceId: row.id,
          caller: SYSTEM_CALLER,
          data: { connection_id: row.id, provider_id: row.provider_id, stage: "refresh" },
        });
      });
    } finally {
      ctx.logger.error(
        { connectionId: row.id, reason: error instanceof Error ? error.message : "unknown" },
        "refreshed token could not be stored",
      );
    }
  }

  async function refreshOnce(id: string, force: boolean, attempts = 2): Promise<RefreshOutcome> {
    const current = await loadConnection(sql, id);
    assertUsable(current);
    if (current.auth_type !== "oauth2") {
      throw new AtriumError(
        Code.FailedPrecondition,
        `connection ${id} (${current.auth_type}) has nothing to refresh`,
      );
    }
    if (!force && !isExpired(current) && !isDue(current)) return "not_due";
    const claimed = await claim(id);
    if (!claimed) {
      const outcome = await awaitOtherInstance(id);
      if (force) return outcome;
      const after = await loadConnection(sql, id);
      assertUsable(after);
      if (!isExpired(after)) return outcome;
      // The other instance's refresh failed: try once ourselves, and never serve an expired token.
      if (attempts > 1) return refreshOnce(id, force, attempts - 1);
      throw providerUnavailable(`refresh of connection ${id} failed; will retry`);
    }
    // Another instance may have refreshed between our read and our claim.
    if (!force && !isExpired(claimed) && !isDue(claimed)) {
      await release(sql, id);
      return "refreshed_elsewhere";
    }
    return perform(claimed);
  }

  function singleFlight(id: string, run: () => Promise<RefreshOutcome>): Promise<RefreshOutcome> {
    const existing = inFlight.get(id);
    if (existing) return existing;
    const promise = run().finally(() => inFlight.delete(id));
    inFlight.set(id, promise);
    return promise;
  }

  return {
    refresh: (id, { force }) => singleFlight(id, () => refreshOnce(id, force)),
    refreshClaimed: (row) => singleFlight(row.id, () => perform(row)),
  };
}
