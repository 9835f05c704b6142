import { randomUUID } from "node:crypto";
import { AtriumError, Code, isUniqueViolation, type Sql, type SqlExecutor } from "@atrium/kit";
import { type AuditEventInput, type CallerContext, writeAuditEvent } from "../audit/audit-log.js";
import { connectionStore } from "../connections/connection-store.js";
import type { SecretBackend } from "../secrets/secret-backend.js";
import { secretFingerprint } from "../vault/key-material.js";
import {
  PROVIDER_TEXT_FIELDS,
  type ProviderField,
  type ProviderFields,
} from "./provider-fields.js";
import { type ProviderInput, validateProviderRegistration } from "./provider-rules.js";

export interface ProviderRecord {
  id: string;
  name: string;
  auth_type: string;
  client_id: string;
  client_secret_enc: string | null;
  client_secret_ref: string | null;
  client_secret_fingerprint: string;
  secret_backend: string;
  scopes: string[];
  auth_url: string;
  token_url: string;
  issuer: string;
  enable_discovery: boolean;
  well_known_url: string;
  api_base_url: string;
  user_info_endpoint: string;
  description: string;
  category: string;
  params: Record<string, string>;
  saml_idp_entity_id: string;
  saml_idp_sso_url: string;
  saml_idp_x509_cert: string;
  saml_sp_entity_id: string;
  created_at: Date;
  updated_at: Date;
}

export interface ProviderStoreOptions {
  sql: Sql;
  secrets: SecretBackend;
  /** Every backend that may hold a secret of an existing row (rows outlive a backend switch). */
  readBackends: SecretBackend[];
}

export interface ProviderStore {
  create(fields: ProviderFields, caller: CallerContext): Promise<ProviderRecord>;
  replace(id: string, fields: ProviderFields, caller: CallerContext): Promise<ProviderRecord>;
  /** Merges the fields named in `present` (all fields set in `fields` when omitted). */
  update(
    id: string,
    fields: ProviderFields,
    caller: CallerContext,
    present?: ReadonlySet<ProviderField>,
  ): Promise<ProviderRecord>;
  get(id: string): Promise<ProviderRecord>;
  list(): Promise<ProviderRecord[]>;
  remove(id: string, caller: CallerContext): Promise<{ secretDeleted: boolean }>;
  /** The client secret, from the row column or the external backend; undefined when none. */
  clientSecret(provider: ProviderRecord): Promise<string | undefined>;
}

export const providerNotFound = (id: string) =>
  new AtriumError(Code.NotFound, `provider ${id} not found`);

/** REST shows every finding; gRPC callers get the same list in the message. */
function validationError(findings: { field: string; message: string }[]): AtriumError {
  return new AtriumError(
    Code.InvalidArgument,
    `provider is invalid: ${findings.map((f) => `${f.field} ${f.message}`).join("; ")}`,
    { httpBody: { code: "invalid_argument", message: "provider is invalid", findings } },
  );
}

function toRuleInput(fields: ProviderFields): ProviderInput {
  return { ...fields };
}

/** What an audit event may say about a write: never secrets, never client_id, no params values. */
export function redactProviderPayload(fields: ProviderFields): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    if (key === "client_secret" || key === "client_id") out[key] = "[REDACTED]";
    else if (key === "params") {
      out.params = Object.fromEntries(Object.keys(value as object).map((k) => [k, "***"]));
    } else out[key] = value;
  }
  return out;
}

/** The audit event of a PUT or PATCH: what the caller sent (redacted), not the merged result. */
function providerUpdated(
  row: ProviderRecord,
  method: "PUT" | "PATCH",
  sent: ProviderFields,
  caller: CallerContext,
): AuditEventInput {
  return {
    eventType: "provider.updated",
    resourceId: row.id,
    caller,
    data: {
      provider_id: row.id,
      provider_name: row.name,
      method,
      changes: redactProviderPayload(sent),
      secret_rotated: sent.client_secret !== undefined && sent.client_secret !== "",
    },
  };
}

function recordToFields(row: ProviderRecord): ProviderFields {
  const fields: ProviderFields = {
    scopes: row.scopes,
    params: row.params,
    enable_discovery: row.enable_discovery,
  };
  for (const column of PROVIDER_TEXT_FIELDS) {
    if (row[column] !== "") fields[column] = row[column];
  }
  return fields;
}

export function createProviderStore(options: ProviderStoreOptions): ProviderStore {
  const { sql, secrets } = options;

  async function fetch(tx: SqlExecutor, id: string, lock = false): Promise<ProviderRecord> {
    const { rows } = await tx.query<ProviderRecord>(
      `SELECT * FROM broker_providers WHERE id = $1${lock ? " FOR UPDATE" : ""}`,
      [id],
    );
    if (!rows[0]) throw providerNotFound(id);
    return rows[0];
  }

  /** Stores a secret first (external backends cannot join the transaction), then the row. */
  async function write(
    id: string,
    fields: ProviderFields,
    exists: boolean,
    audit: (tx: SqlExecutor, row: ProviderRecord) => Promise<void>,
  ): Promise<ProviderRecord> {
    const stored =
      fields.client_secret !== undefined && fields.client_secret !== ""
        ? await secrets.put(id, fields.client_secret)
        : undefined;
    const values = PROVIDER_TEXT_FIELDS.map((c) => fields[c] ?? "");
    const common = [
      ...values,
      fields.scopes ?? [],
      JSON.stringify(fields.params ?? {}),
      fields.enable_discovery ?? false,
    ];
    const secretColumns = stored
      ? [
          stored.enc ?? null,
          stored.ref ?? null,
          secretFingerprint(fields.client_secret as string),
          secrets.kind,
        ]
      : undefined;
    try {
      return await sql.transaction(async (tx) => {
        let row: ProviderRecord;
        if (!exists) {
          const { rows } = await tx.query<ProviderRecord>(
            `INSERT INTO broker_providers (id, ${PROVIDER_TEXT_FIELDS.join(", ")}, scopes, params, enable_discovery,
               client_secret_enc, client_secret_ref, client_secret_fingerprint, secret_backend)
             VALUES ($1, ${PROVIDER_TEXT_FIELDS.map((_, i) => `$${i + 2}`).join(", ")},
               $${PROVIDER_TEXT_FIELDS.length + 2}, $${PROVIDER_TEXT_FIELDS.length + 3}, $${PROVIDER_TEXT_FIELDS.length + 4},
               $${PROVIDER_TEXT_FIELDS.length + 5}, $${PROVIDER_TEXT_FIELDS.length + 6}, $${PROVIDER_TEXT_FIELDS.length + 7},
               $${PROVIDER_TEXT_FIELDS.length + 8})
             RETURNING *`,
            [id, ...common, ...(secretColumns ?? [null, null, "", secrets.kind])],
          );
          row = rows[0];
        } else {
          await fetch(tx, id, true);
          const sets = PROVIDER_TEXT_FIELDS.map((c, i) => `${c} = $${i + 2}`);
          const n = PROVIDER_TEXT_FIELDS.length;
          sets.push(`scopes = $${n + 2}`, `params = $${n + 3}`, `enable_discovery = $${n + 4}`);
          const params: unknown[] = [id, ...common];
          if (secretColumns) {
            sets.push(
              `client_secret_enc = $${n + 5}`,
              `client_secret_ref = $${n + 6}`,
              `client_secret_fingerprint = $${n + 7}`,
              `secret_backend = $${n + 8}`,
            );
            params.push(...secretColumns);
          }
          const { rows } = await tx.query<ProviderRecord>(
            `UPDATE broker_providers SET ${sets.join(", ")}, updated_at = now() WHERE id = $1 RETURNING *`,
            params,
          );
          row = rows[0];
        }
        await audit(tx, row);
        return row;
      });
    } catch (error) {
      // A provider that was never created must not leave its external secret behind.
      if (!exists && stored?.ref) await secrets.remove(id).catch(() => false);
      if (isUniqueViolation(error)) {
        throw new AtriumError(
          Code.AlreadyExists,
          `a provider named "${fields.name}" already exists`,
        );
      }
      throw error;
    }
  }

  function validate(fields: ProviderFields, clientSecretStored: boolean): void {
    const findings = validateProviderRegistration(toRuleInput(fields), { clientSecretStored });
    if (findings.length > 0) throw validationError(findings);
  }

  const hasSecret = (row: ProviderRecord) =>
    Boolean(row.client_secret_enc || row.client_secret_ref);

  return {
    async create(fields, caller) {
      validate(fields, false);
      const id = randomUUID();
      return write(id, fields, false, (tx, row) =>
        writeAuditEvent(tx, {
          eventType: "provider.created",
          resourceId: row.id,
          caller,
          data: { provider_id: row.id, provider_name: row.name, auth_type: row.auth_type },
        }),
      );
    },

    async replace(id, fields, caller) {
      const existing = await fetch(sql, id);
      validate(fields, hasSecret(existing));
      return write(id, fields, true, (tx, row) =>
        writeAuditEvent(tx, providerUpdated(row, "PUT", fields, caller)),
      );
    },

    async update(id, fields, caller, present) {
      const existing = await fetch(sql, id);
      const merged = recordToFields(existing);
      const sent: ProviderFields = {};
      for (const [key, value] of Object.entries(fields) as [ProviderField, unknown][]) {
        const named = present ? present.has(key) : value !== undefined;
        if (!named) continue;
        (merged as Record<string, unknown>)[key] = value;
        (sent as Record<string, unknown>)[key] = value;
      }
      // An empty string clears an optional text field rather than storing "".
      for (const column of PROVIDER_TEXT_FIELDS) if (merged[column] === "") delete merged[column];
      validate(merged, hasSecret(existing));
      return write(id, merged, true, (tx, row) =>
        writeAuditEvent(tx, providerUpdated(row, "PATCH", sent, caller)),
      );
    },

    get: (id) => fetch(sql, id),

    async list() {
      const { rows } = await sql.query<ProviderRecord>(
        "SELECT * FROM broker_providers ORDER BY name",
      );
      return rows;
    },

    async remove(id, caller) {
      const row = await sql.transaction(async (tx) => {
        const found = await fetch(tx, id, true);
        const live = await connectionStore.countLiveOfProvider(tx, id);
        if (live > 0) {
          throw new AtriumError(
            Code.FailedPrecondition,
            `provider ${id} still has ${live} connection(s); revoke them first`,
          );
        }
        await connectionStore.deleteOfProvider(tx, id);
        await tx.query("DELETE FROM broker_providers WHERE id = $1", [id]);
        await writeAuditEvent(tx, {
          eventType: "provider.deleted",
          resourceId: id,
          caller,
          data: { provider_id: id, provider_name: found.name },
        });
        return found;
      });
      // The row is gone first, so a failed external delete leaves an orphan secret, never a
      // provider whose secret vanished.
      const backend = options.readBackends.find((b) => b.kind === "gcp");
      const secretDeleted = row.client_secret_ref && backend ? await backend.remove(id) : false;
      return { secretDeleted };
    },

    async clientSecret(provider) {
      if (provider.client_secret_enc) {
        const internal = options.readBackends.find((b) => b.kind === "internal");
        return internal?.read(provider.id, { enc: provider.client_secret_enc });
      }
      if (provider.client_secret_ref) {
        const external = options.readBackends.find((b) => b.kind === "gcp");
        if (!external) {
          throw new AtriumError(
            Code.FailedPrecondition,
            `provider ${provider.id} keeps its secret in an external backend that is not configured`,
          );
        }
        return external.read(provider.id, { ref: provider.client_secret_ref });
      }
      return undefined;
    },
  };
}
