import { randomUUID } from "node:crypto";
import { AtriumError, Code } from "@atrium/kit";
import { type CallerContext, writeAuditEvent } from "../audit/audit-log.js";
import type { BrokerContext } from "../broker-context.js";
import type { TokenSet } from "../oauth/oauth-client.js";
import type { ProviderRecord } from "../providers/provider-store.js";
import { enqueueWebhookEvent } from "../webhooks/webhook-events.js";
import { type ConnectionRecord, type Credential, sealCredential } from "./connection-record.js";
import { connectionStore } from "./connection-store.js";
import { tokenSchedule } from "./token-refresher.js";

export interface NewConnection {
  provider: ProviderRecord;
  workspaceId: string;
  credential: Credential;
  scopes: string[];
  subject: string;
  tokens?: Pick<TokenSet, "expires_in" | "refresh_token">;
  method: "oauth2" | "saml" | "static";
}

/**
 * Seals and stores a credential that completed a flow (OAuth, SAML) or passed validation
 * (static), with its audit event and webhook in the same transaction.
 */
export async function storeConnection(
  ctx: BrokerContext,
  input: NewConnection,
  caller: CallerContext,
): Promise<ConnectionRecord> {
  const id = randomUUID();
  const schedule = input.tokens ? tokenSchedule(input.tokens, ctx.settings) : undefined;
  try {
    return await ctx.sql.transaction(async (tx) => {
      const connection = await connectionStore.insert(tx, {
        id,
        workspaceId: input.workspaceId,
        providerId: input.provider.id,
        authType: input.provider.auth_type,
        credentialEnc: sealCredential(ctx.vault, id, input.credential),
        scopes: input.scopes,
        subject: input.subject,
        expiresAt: schedule?.expiresAt ?? null,
        refreshDueAt: schedule?.refreshDueAt ?? null,
      });
      await writeAuditEvent(tx, {
        eventType: "connection.created",
        resourceId: id,
        caller,
        data: {
          connection_id: id,
          workspace_id: input.workspaceId,
          provider_id: input.provider.id,
          provider_name: input.provider.name,
          method: input.method,
        },
      });
      await enqueueWebhookEvent(tx, "connection.created", {
        connection_id: id,
        workspace_id: input.workspaceId,
        provider_id: input.provider.id,
        provider_name: input.provider.name,
        auth_type: input.provider.auth_type,
        status: connection.status,
      });
      return connection;
    });
  } catch (error) {
    await auditFailure(ctx, "token.storage_failed", id, caller, {
      provider_id: input.provider.id,
      workspace_id: input.workspaceId,
      stage: input.method,
    });
    ctx.logger.error(
      {
        providerId: input.provider.id,
        reason: error instanceof Error ? error.message : "unknown",
      },
      "credential could not be stored",
    );
    throw new AtriumError(Code.Internal, "credential could not be stored", { cause: error });
  }
}

/** Records a failed exchange or store; a failure to record it is logged, not thrown over it. */
export async function auditFailure(
  ctx: BrokerContext,
  eventType: "token.exchange_failed" | "token.storage_failed",
  resourceId: string,
  caller: CallerContext,
  data: Record<string, unknown>,
): Promise<void> {
  try {
    await ctx.sql.transaction((tx) => writeAuditEvent(tx, { eventType, resourceId, caller, data }));
  } catch (error) {
    ctx.logger.error({ err: error, eventType }, "audit event could not be written");
  }
}
