import type { SqlExecutor } from "@atrium/kit";
import { type Credential, sealCredential } from "../connections/connection-record.js";
import { decodeKey, keyId } from "../vault/key-material.js";
import { createVault } from "../vault/vault.js";

export interface StoredConnection {
  id: string;
  workspaceId: string;
  providerId: string;
  authType: string;
  /** Default `active`. */
  status?: string;
  credential: Credential;
}

/**
 * Connections written straight to `broker_connections`, sealed as the broker seals them with its
 * ENCRYPTION_KEY: for tests that need a stored credential without running a flow.
 */
export async function storeConnections(
  sql: SqlExecutor,
  encryptionKey: string,
  connections: StoredConnection[],
): Promise<void> {
  const key = decodeKey(encryptionKey) as Buffer;
  const vault = createVault({ keys: new Map([[keyId(key), key]]), currentKeyId: keyId(key) });
  for (const connection of connections) {
    await sql.query(
      `INSERT INTO broker_connections (id, workspace_id, provider_id, auth_type, status, credential_enc)
       VALUES ($1, $2, $3, $4, $5, $6)`,
      [
        connection.id,
        connection.workspaceId,
        connection.providerId,
        connection.authType,
        connection.status ?? "active",
        sealCredential(vault, connection.id, connection.credential),
      ],
    );
  }
}
