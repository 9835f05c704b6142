import { connectionRevoked, type SqlExecutor } from "@atrium/kit";
import { connectionNotFound } from "./connection-errors.js";
import type { ConnectionRecord, ConnectionStatus, RevocationOutcome } from "./connection-record.js";

/** A token this close to its expiry is treated as expired: it would lapse on its way out. */
export const EXPIRY_MARGIN_MS = 5_000;

/** Whether the connection's token is expired or expires within the margin. */
export function expiresSoon(row: ConnectionRecord, now = Date.now()): boolean {
  return row.expires_at !== null && row.expires_at.getTime() <= now + EXPIRY_MARGIN_MS;
}

export interface ConnectionWithProviderParams {
  connection: ConnectionRecord;
  providerParams: Record<string, string>;
}

/** One loaded connection, or connection_not_found (also when it belongs to another workspace). */
export function pickConnection(
  found: Map<string, ConnectionWithProviderParams>,
  id: string,
  workspaceId?: string,
): ConnectionWithProviderParams {
  const loaded = found.get(id);
  if (!loaded || (workspaceId && loaded.connection.workspace_id !== workspaceId)) {
    throw connectionNotFound(id);
  }
  return loaded;
}

export interface NewConnectionRow {
  id: string;
  workspaceId: string;
  providerId: string;
  authType: string;
  credentialEnc: string;
  scopes: string[];
  subject: string;
  expiresAt: Date | null;
  refreshDueAt: Date | null;
}

export interface RefreshedCredential {
  credentialEnc: string;
  expiresAt: Date;
  refreshDueAt: Date | null;
  /** The scopes the provider granted, space-separated; null keeps the stored ones. */
  scope: string | null;
}

export interface RefreshFailure {
  failures: number;
  healthStatus: "degraded" | "unhealthy";
  status: Extract<ConnectionStatus, "active" | "failed">;
  retryInSeconds: number;
}

/**
 * Every statement on `broker_connections`, typed. Each takes the executor to run on, so a caller
 * puts several (and its own, an audit row, an outbox entry) in one transaction.
 */
export const connectionStore = {
  /** The connection, or connection_not_found (also when it belongs to another workspace). */
  async load(db: SqlExecutor, id: string, workspaceId?: string): Promise<ConnectionRecord> {
    const { rows } = await db.query<ConnectionRecord>(
      "SELECT * FROM broker_connections WHERE id = $1",
      [id],
    );
    const row = rows[0];
    if (!row || (workspaceId && row.workspace_id !== workspaceId)) throw connectionNotFound(id);
    return row;
  },

  /** `load` with the params of the connection's provider, in the same query (token reads). */
  async loadWithProviderParams(
    db: SqlExecutor,
    id: string,
    workspaceId?: string,
  ): Promise<ConnectionWithProviderParams> {
    const found = await connectionStore.loadManyWithProviderParams(db, [id]);
    return pickConnection(found, id, workspaceId);
  },

  /** `loadWithProviderParams` for several ids in one query; `pickConnection` takes each out. */
  async loadManyWithProviderParams(
    db: SqlExecutor,
    ids: string[],
  ): Promise<Map<string, ConnectionWithProviderParams>> {
    const { rows } = await db.query<ConnectionRecord & { provider_params: Record<string, string> }>(
      `SELECT c.*, p.params AS provider_params
         FROM broker_connections c JOIN broker_providers p ON p.id = c.provider_id
        WHERE c.id = ANY($1)`,
      [ids],
    );
    return new Map(
      rows.map(({ provider_params: providerParams, ...connection }) => [
        connection.id,
        { connection, providerParams },
      ]),
    );
  },

  async list(db: SqlExecutor, workspaceId?: string): Promise<ConnectionRecord[]> {
    const { rows } = workspaceId
      ? await db.query<ConnectionRecord>(
          "SELECT * FROM broker_connections WHERE workspace_id = $1 ORDER BY created_at, id",
          [workspaceId],
        )
      : await db.query<ConnectionRecord>(
          "SELECT * FROM broker_connections ORDER BY created_at, id",
        );
    return rows;
  },

  async insert(db: SqlExecutor, row: NewConnectionRow): Promise<ConnectionRecord> {
    const { rows } = await db.query<ConnectionRecord>(
      `INSERT INTO broker_connections (id, workspace_id, provider_id, auth_type, status,
         credential_enc, scopes, subject, expires_at, refresh_due_at)
       VALUES ($1, $2, $3, $4, 'active', $5, $6, $7, $8, $9) RETURNING *`,
      [
        row.id,
        row.workspaceId,
        row.providerId,
        row.authType,
        row.credentialEnc,
        row.scopes,
        row.subject,
        row.expiresAt,
        row.refreshDueAt,
      ],
    );
    return rows[0];
  },

  /**
   * The credential write rule: a shared lock on the row and `revoked_at IS NULL`, so a write that
   * loses a race with a revocation (which holds the row exclusively) sees the revocation and fails.
   */
  async lockForCredentialWrite(tx: SqlExecutor, id: string): Promise<ConnectionRecord> {
    const { rows } = await tx.query<ConnectionRecord>(
      "SELECT * FROM broker_connections WHERE id = $1 FOR SHARE",
      [id],
    );
    const row = rows[0];
    if (!row) throw connectionNotFound(id);
    if (row.revoked_at) throw connectionRevoked({ connection_id: id });
    return row;
  },

  /** The row held exclusively for a revocation; undefined when there is none. */
  async lockForRevocation(tx: SqlExecutor, id: string): Promise<ConnectionRecord | undefined> {
    const { rows } = await tx.query<ConnectionRecord>(
      "SELECT * FROM broker_connections WHERE id = $1 FOR UPDATE",
      [id],
    );
    return rows[0];
  },

  /** Takes the refresh lease of one live connection; undefined when another holder has it. */
  async claimLease(
    db: SqlExecutor,
    id: string,
    owner: string,
    leaseSeconds: number,
  ): Promise<ConnectionRecord | undefined> {
    const { rows } = await db.query<ConnectionRecord>(
      `UPDATE broker_connections
          SET lease_owner = $2, lease_until = now() + make_interval(secs => $3)
        WHERE id = $1 AND revoked_at IS NULL AND status = 'active'
          AND (lease_until IS NULL OR lease_until < now())
        RETURNING *`,
      [id, owner, leaseSeconds],
    );
    return rows[0];
  },

  /** Takes the leases of up to `limit` due OAuth connections no other instance holds. */
  async claimDue(
    db: SqlExecutor,
    owner: string,
    leaseSeconds: number,
    limit: number,
  ): Promise<ConnectionRecord[]> {
    const { rows } = await db.query<ConnectionRecord>(
      `WITH due AS (
         SELECT id FROM broker_connections
          WHERE status = 'active' AND revoked_at IS NULL AND auth_type = 'oauth2'
            AND refresh_due_at <= now()
            AND (lease_until IS NULL OR lease_until < now())
          ORDER BY refresh_due_at
          LIMIT $3
          FOR UPDATE SKIP LOCKED)
       UPDATE broker_connections c
          SET lease_owner = $1, lease_until = now() + make_interval(secs => $2)
         FROM due WHERE c.id = due.id
       RETURNING c.*`,
      [owner, leaseSeconds, limit],
    );
    return rows;
  },

  async releaseLease(db: SqlExecutor, id: string, owner: string): Promise<void> {
    await db.query(
      "UPDATE broker_connections SET lease_owner = NULL, lease_until = NULL WHERE id = $1 AND lease_owner = $2",
      [id, owner],
    );
  },

  /** Stores a refreshed credential and drops the lease; connectionRevoked if revoked meanwhile. */
  async storeRefreshed(
    tx: SqlExecutor,
    id: string,
    refreshed: RefreshedCredential,
  ): Promise<ConnectionRecord> {
    const { rows } = await tx.query<ConnectionRecord>(
      `UPDATE broker_connections
          SET credential_enc = $2, expires_at = $3, refresh_due_at = $4,
              last_refreshed_at = now(), refresh_count = refresh_count + 1,
              refresh_failures = 0, health_status = 'healthy',
              scopes = CASE WHEN $5::text IS NULL THEN scopes ELSE string_to_array($5::text, ' ') END,
              lease_owner = NULL, lease_until = NULL, updated_at = now()
        WHERE id = $1 AND revoked_at IS NULL
        RETURNING *`,
      [id, refreshed.credentialEnc, refreshed.expiresAt, refreshed.refreshDueAt, refreshed.scope],
    );
    if (!rows[0]) throw connectionRevoked({ connection_id: id });
    return rows[0];
  },

  /** The provider refused the refresh: a human has to consent again. */
  async markAttention(tx: SqlExecutor, id: string): Promise<void> {
    await tx.query(
      `UPDATE broker_connections
          SET status = 'attention', health_status = 'unhealthy', lease_owner = NULL,
              lease_until = NULL, refresh_due_at = NULL, updated_at = now()
        WHERE id = $1 AND revoked_at IS NULL`,
      [id],
    );
  },

  /**
   * A refresh failed for now: counts it, drops the lease and schedules the retry. False when the
   * connection was revoked meanwhile (nothing changed).
   */
  async recordRefreshFailure(
    db: SqlExecutor,
    id: string,
    failure: RefreshFailure,
  ): Promise<boolean> {
    const { rowCount } = await db.query(
      `UPDATE broker_connections
          SET refresh_failures = $2, health_status = $3, status = $4,
              refresh_due_at = now() + make_interval(secs => $5),
              lease_owner = NULL, lease_until = NULL, updated_at = now()
        WHERE id = $1 AND revoked_at IS NULL`,
      [id, failure.failures, failure.healthStatus, failure.status, failure.retryInSeconds],
    );
    return rowCount > 0;
  },

  /** Deletes the credential and records the revocation; run under `lockForRevocation`. */
  async markRevoked(
    tx: SqlExecutor,
    id: string,
    revokedAt: Date,
    outcome: RevocationOutcome,
  ): Promise<void> {
    await tx.query(
      `UPDATE broker_connections
          SET status = 'revoked', revoked_at = $2, credential_enc = NULL, revocation = $3,
              refresh_due_at = NULL, lease_owner = NULL, lease_until = NULL,
              health_status = 'unhealthy', updated_at = now()
        WHERE id = $1`,
      [id, revokedAt, JSON.stringify(outcome)],
    );
  },

  /** What a revocation at the provider needs to know; provider_id and auth_type never change. */
  async upstreamOf(
    db: SqlExecutor,
    id: string,
  ): Promise<Pick<ConnectionRecord, "provider_id" | "auth_type"> | undefined> {
    const { rows } = await db.query<Pick<ConnectionRecord, "provider_id" | "auth_type">>(
      "SELECT provider_id, auth_type FROM broker_connections WHERE id = $1",
      [id],
    );
    return rows[0];
  },

  async countLiveOfProvider(db: SqlExecutor, providerId: string): Promise<number> {
    const { rows } = await db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM broker_connections WHERE provider_id = $1 AND revoked_at IS NULL",
      [providerId],
    );
    return rows[0]?.n ?? 0;
  },

  /** Deletes a provider's (revoked) connections and their agent sessions. */
  async deleteOfProvider(tx: SqlExecutor, providerId: string): Promise<void> {
    await tx.query(
      "DELETE FROM broker_agent_sessions WHERE connection_id IN (SELECT id FROM broker_connections WHERE provider_id = $1)",
      [providerId],
    );
    await tx.query("DELETE FROM broker_connections WHERE provider_id = $1", [providerId]);
  },
};
