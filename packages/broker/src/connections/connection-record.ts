import type { Vault } from "../vault/vault.js";

export type ConnectionStatus = "active" | "attention" | "failed" | "revoked";
export type HealthStatus = "healthy" | "degraded" | "unhealthy";

export interface ConnectionRecord {
  id: string;
  workspace_id: string;
  provider_id: string;
  auth_type: string;
  status: ConnectionStatus;
  health_status: HealthStatus;
  credential_enc: string | null;
  scopes: string[];
  subject: string;
  expires_at: Date | null;
  refresh_due_at: Date | null;
  last_refreshed_at: Date | null;
  refresh_count: number;
  refresh_failures: number;
  lease_owner: string | null;
  lease_until: Date | null;
  revoked_at: Date | null;
  revocation: RevocationOutcome | null;
  created_at: Date;
  updated_at: Date;
}

export interface RevocationOutcome {
  token_deleted: boolean;
  provider_revoked: boolean;
  provider_revocation_error: string;
  reason: string;
  revoked_at: string;
}

/** The decrypted credential; which fields are set depends on auth_type. */
export interface Credential {
  access_token?: string;
  token_type?: string;
  refresh_token?: string;
  id_token?: string;
  api_key?: string;
  username?: string;
  password?: string;
  name_id?: string;
  attributes?: Record<string, string>;
}

export function sealCredential(vault: Vault, connectionId: string, credential: Credential): string {
  return vault.seal(JSON.stringify(credential), connectionId);
}

export function openCredential(vault: Vault, row: ConnectionRecord): Credential {
  if (!row.credential_enc) return {};
  return JSON.parse(vault.open(row.credential_enc, row.id)) as Credential;
}
