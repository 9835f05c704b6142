import {
  AtriumError,
  attentionRequired,
  Code,
  connectionNotActive,
  connectionRevoked,
  providerUnavailable,
  type SqlExecutor,
} from "@atrium/kit";
import { SYSTEM_CALLER, writeAuditEvent } from "../audit/audit-log.js";
import type { BrokerContext } from "../broker-context.js";
import { ProviderRejectedError, type TokenSet } from "../oauth/oauth-client.js";
import { enqueueWebhookEvent } from "../webhooks/webhook-events.js";
import {
  type ConnectionRecord,
  type Credential,
  openCredential,
  sealCredential,
} from "./connection-record.js";
import { connectionStore, expiresSoon } from "./connection-store.js";

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
  if (row.revoked_at || row.status === "revoked") {
    throw connectionRevoked({ connection_id: row.id });
  }
  if (row.status === "attention") throw attentionRequired({ connection_id: row.id });
  if (row.status !== "active") {
    throw connectionNotActive({ connection_id: row.id, status: row.status });
  }
}

export type RefreshOutcome = "refreshed" | "refreshed_elsewhere" | "not_due";

/** What a refresh did, and the connection as it is now. */
export interface Refreshed {
  outcome: RefreshOutcome;
  connection: ConnectionRecord;
  /** The new credential, when this instance refreshed it (saves opening it again). */
  credential?: Credential;
}

export interface TokenRefresher {
  /**
   * Refreshes one connection, loaded by the caller, at most once at a time cluster-wide. `force`
   * refreshes even when the token is fresh (explicit POST /refresh); otherwise only an expired or
   * due token is refreshed.
   */
  refresh(row: ConnectionRecord, options: { force: boolean }): Promise<Refreshed>;
  /** Refreshes a row whose lease this instance already holds (the refresh loop's claims). */
  refreshClaimed(row: ConnectionRecord): Promise<Refreshed>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function createTokenRefresher(ctx: BrokerContext): TokenRefresher {
  const inFlight = new Map<string, Promise<Refreshed>>();
  const { sql, settings, instanceId } = ctx;

  const isDue = (row: ConnectionRecord, now = Date.now()) =>
    row.refresh_due_at !== null && row.refresh_due_at.getTime() <= now;

  const release = (db: SqlExecutor, id: string) => connectionStore.releaseLease(db, id, instanceId);

  /** Another instance holds the lease: wait for it to finish; resolves with the row then. */
  async function awaitOtherInstance(id: string): Promise<ConnectionRecord> {
    const deadline = Date.now() + settings.leaseSeconds * 1000;
    for (;;) {
      const row = await connectionStore.load(sql, id);
      assertUsable(row);
      if (!row.lease_until || row.lease_until.getTime() < Date.now()) return row;
      if (Date.now() > deadline) {
        throw new AtriumError(Code.Unavailable, `connection ${id} is being refreshed elsewhere`);
      }
      await sleep(50);
    }
  }

  async function perform(row: ConnectionRecord): Promise<Refreshed> {
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
      throw attentionRequired({ connection_id: row.id });
    }
    let tokens: TokenSet;
    try {
      const provider = await ctx.providers.get(row.provider_id);
      const secret = await ctx.providers.clientSecret(provider);
      tokens = await ctx.oauth.refresh(provider, secret, credential.refresh_token);
    } catch (error) {
      if (error instanceof ProviderRejectedError) {
        await markAttention(row, error.oauthError, error.status);
        throw attentionRequired({ connection_id: row.id });
      }
      await markTransientFailure(row, error);
      if (error instanceof AtriumError) throw error;
      throw providerUnavailable({ detail: `refresh of connection ${row.id} failed; will retry` });
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
    let stored: ConnectionRecord;
    try {
      stored = await sql.transaction(async (tx) => {
        await connectionStore.lockForCredentialWrite(tx, row.id);
        return connectionStore.storeRefreshed(tx, row.id, {
          credentialEnc: sealCredential(ctx.vault, row.id, next),
          expiresAt: schedule.expiresAt,
          refreshDueAt: schedule.refreshDueAt,
          scope: tokens.scope ?? null,
        });
      });
    } catch (error) {
      if (error instanceof AtriumError && error.code === Code.FailedPrecondition) throw error;
      await recordStorageFailure(row, error);
      throw new AtriumError(Code.Internal, `refreshed token of ${row.id} could not be stored`, {
        cause: error,
      });
    }
    return { outcome: "refreshed", connection: stored, credential: next };
  }

  async function markAttention(row: ConnectionRecord, oauthError: string, status: number) {
    await sql.transaction(async (tx) => {
      try {
        await connectionStore.lockForCredentialWrite(tx, row.id);
      } catch {
        return; // revoked meanwhile: revocation wins, nothing to mark
      }
      await connectionStore.markAttention(tx, row.id);
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
      const event = {
        connection_id: row.id,
        workspace_id: row.workspace_id,
        provider_id: row.provider_id,
      };
      // Two events: the cause (the provider refused) and the state a human has to act on.
      await enqueueWebhookEvent(tx, "token.refresh_fatal", { ...event, error: oauthError });
      await enqueueWebhookEvent(tx, "connection.attention_required", {
        ...event,
        status: "attention",
        reason: oauthError,
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
    await sql.transaction(async (tx) => {
      const changed = await connectionStore.recordRefreshFailure(tx, row.id, {
        failures,
        healthStatus: failed ? "unhealthy" : "degraded",
        status: failed ? "failed" : "active",
        retryInSeconds: backoffMs / 1000,
      });
      if (failed && changed) {
        await enqueueWebhookEvent(tx, "connection.failed", {
          connection_id: row.id,
          workspace_id: row.workspace_id,
          provider_id: row.provider_id,
          status: "failed",
          refresh_failures: failures,
        });
      }
    });
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

  async function refreshOnce(
    current: ConnectionRecord,
    force: boolean,
    attempts = 2,
  ): Promise<Refreshed> {
    const { id } = current;
    assertUsable(current);
    if (current.auth_type !== "oauth2") {
      throw new AtriumError(
        Code.FailedPrecondition,
        `connection ${id} (${current.auth_type}) has nothing to refresh`,
      );
    }
    if (!force && !expiresSoon(current) && !isDue(current)) {
      return { outcome: "not_due", connection: current };
    }
    const claimed = await connectionStore.claimLease(sql, id, instanceId, settings.leaseSeconds);
    if (!claimed) {
      const after = await awaitOtherInstance(id);
      if (force || !expiresSoon(after))
        return { outcome: "refreshed_elsewhere", connection: after };
      // The other instance's refresh failed: try once ourselves, and never serve an expired token.
      if (attempts > 1) return refreshOnce(after, force, attempts - 1);
      throw providerUnavailable({ detail: `refresh of connection ${id} failed; will retry` });
    }
    // Another instance may have refreshed between our read and our claim.
    if (!force && !expiresSoon(claimed) && !isDue(claimed)) {
      await release(sql, id);
      return { outcome: "refreshed_elsewhere", connection: claimed };
    }
    return perform(claimed);
  }

  function singleFlight(id: string, run: () => Promise<Refreshed>): Promise<Refreshed> {
    const existing = inFlight.get(id);
    if (existing) return existing;
    const promise = run().finally(() => inFlight.delete(id));
    inFlight.set(id, promise);
    return promise;
  }

  return {
    refresh: (row, { force }) => singleFlight(row.id, () => refreshOnce(row, force)),
    refreshClaimed: (row) => singleFlight(row.id, () => perform(row)),
  };
}
