import type { brokerV1 } from "@atrium/api";
import { AtriumError, Code } from "@atrium/kit";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { createAgentStore } from "../agents/agent-store.js";
import { type AuditEventRow, queryAuditEvents } from "../audit/audit-log.js";
import type { BrokerContext } from "../broker-context.js";
import type { ConnectionRecord } from "../connections/connection-record.js";
import type { ConnectionService } from "../connections/connection-service.js";
import {
  DEPRECATED_CREDENTIAL_PARAMS,
  deprecatedCredentialParams,
} from "../connections/credential-strategy.js";
import {
  isProviderField,
  PROVIDER_FIELD_BY_PROPERTY,
  type ProviderField,
  type ProviderFields,
} from "../providers/provider-fields.js";
import type { ProviderRecord } from "../providers/provider-store.js";
import type { SamlFlow } from "../saml/saml-flow.js";
import type { WebhookStore } from "../webhooks/webhook-store.js";
import { createAgentHandlers } from "./agent-handlers.js";
import { callerFrom, ts } from "./handler-values.js";
import { createTokenRetrievals, retrieveToken } from "./token-retrievals.js";
import { createWebhookHandlers } from "./webhook-handlers.js";

export function providerMessage(
  row: ProviderRecord,
): MessageInitShape<typeof brokerV1.ProviderSchema> {
  return {
    id: row.id,
    name: row.name,
    authType: row.auth_type,
    clientId: row.client_id,
    clientSecretFingerprint: row.client_secret_fingerprint,
    scopes: row.scopes,
    authUrl: row.auth_url,
    tokenUrl: row.token_url,
    issuer: row.issuer,
    enableDiscovery: row.enable_discovery,
    wellKnownUrl: row.well_known_url,
    apiBaseUrl: row.api_base_url,
    userInfoEndpoint: row.user_info_endpoint,
    description: row.description,
    category: row.category,
    params: row.params,
    samlIdpEntityId: row.saml_idp_entity_id,
    samlIdpSsoUrl: row.saml_idp_sso_url,
    samlIdpX509Cert: row.saml_idp_x509_cert,
    samlSpEntityId: row.saml_sp_entity_id,
    secretBackend: row.secret_backend,
    createdAt: ts(row.created_at),
    updatedAt: ts(row.updated_at),
  };
}

export function connectionSummary(
  row: ConnectionRecord,
  providerName = "",
): MessageInitShape<typeof brokerV1.ConnectionSummarySchema> {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    providerId: row.provider_id,
    providerName,
    authType: row.auth_type,
    status: row.status,
    healthStatus: row.health_status,
    scopes: row.scopes,
    expiresAt: ts(row.expires_at),
    lastRefreshedAt: ts(row.last_refreshed_at),
    createdAt: ts(row.created_at),
    updatedAt: ts(row.updated_at),
    revokedAt: ts(row.revoked_at),
    subject: row.subject,
  };
}

function auditMessage(row: AuditEventRow): MessageInitShape<typeof brokerV1.AuditEventSchema> {
  return {
    id: row.id,
    eventType: row.event_type,
    createdAt: ts(row.created_at),
    callerIp: row.caller_ip,
    userAgent: row.user_agent,
    resourceId: row.resource_id,
    data: row.data as MessageInitShape<typeof brokerV1.AuditEventSchema>["data"],
  };
}

/** Proto ProviderInput → domain fields; unset optionals stay absent. */
export function providerFields(input: brokerV1.ProviderInput | undefined): ProviderFields {
  const fields: Record<string, unknown> = {};
  if (!input) return fields;
  for (const [local, field] of PROVIDER_FIELD_BY_PROPERTY) {
    const value = (input as unknown as Record<string, unknown>)[local];
    if (value === undefined) continue;
    if (field === "scopes" && (value as string[]).length === 0) continue;
    if (field === "params" && Object.keys(value as object).length === 0) continue;
    fields[field] = value;
  }
  return fields as ProviderFields;
}

/** update_mask paths (snake_case or lowerCamel) → field names; undefined when no mask was sent. */
export function maskFields(paths: readonly string[] | undefined): Set<ProviderField> | undefined {
  if (!paths || paths.length === 0) return undefined;
  const set = new Set<ProviderField>();
  for (const path of paths) {
    const field =
      PROVIDER_FIELD_BY_PROPERTY.get(path) ?? (isProviderField(path) ? path : undefined);
    if (!field)
      throw new AtriumError(Code.InvalidArgument, `update_mask names unknown field "${path}"`);
    set.add(field);
  }
  return set;
}

export interface BrokerHandlersOptions {
  ctx: BrokerContext;
  connections: ConnectionService;
  saml: SamlFlow;
  webhooks: WebhookStore;
}

export function createBrokerHandlers(
  options: BrokerHandlersOptions,
): Partial<ServiceImpl<typeof brokerV1.BrokerService>> {
  const { ctx, connections, saml, webhooks } = options;
  const providers = ctx.providers;

  async function providerNames(rows: ConnectionRecord[]): Promise<Map<string, string>> {
    const ids = [...new Set(rows.map((r) => r.provider_id))];
    if (ids.length === 0) return new Map();
    const { rows: found } = await ctx.sql.query<{ id: string; name: string }>(
      "SELECT id, name FROM broker_providers WHERE id = ANY($1)",
      [ids],
    );
    return new Map(found.map((p) => [p.id, p.name]));
  }

  /** A provider written with the old credential parameter names works; its operator is told. */
  function written(row: ProviderRecord) {
    const deprecated = deprecatedCredentialParams(row.params);
    if (deprecated.length > 0) {
      ctx.logger.warn(
        {
          provider: row.name,
          deprecated: Object.fromEntries(
            deprecated.map((n) => [n, DEPRECATED_CREDENTIAL_PARAMS[n]]),
          ),
        },
        "provider params use deprecated names; rename them (old name → new name)",
      );
    }
    return providerMessage(row);
  }

  async function summary(row: ConnectionRecord) {
    const names = await providerNames([row]);
    return connectionSummary(row, names.get(row.provider_id));
  }

  return {
    async createProvider(request, context) {
      return written(await providers.create(providerFields(request.provider), callerFrom(context)));
    },
    async listProviders() {
      return { providers: (await providers.list()).map(providerMessage) };
    },
    async getProvider(request) {
      return providerMessage(await providers.get(request.id));
    },
    async replaceProvider(request, context) {
      return written(
        await providers.replace(request.id, providerFields(request.provider), callerFrom(context)),
      );
    },
    async updateProvider(request, context) {
      const mask = maskFields(request.updateMask?.paths);
      const fields = providerFields(request.provider);
      if (mask) {
        // Masked empty lists/maps are meaningful (clear them); providerFields dropped them.
        if (mask.has("scopes") && !fields.scopes) fields.scopes = [];
        if (mask.has("params") && !fields.params) fields.params = {};
      }
      return written(await providers.update(request.id, fields, callerFrom(context), mask));
    },
    async deleteProvider(request, context) {
      const { secretDeleted } = await providers.remove(request.id, callerFrom(context));
      return { id: request.id, deleted: true, secretDeleted };
    },
    async getCaptureSchema(request) {
      const provider = await providers.get(request.id);
      const fields =
        provider.auth_type === "api_key"
          ? [{ name: "api_key", secret: true, required: true }]
          : provider.auth_type === "basic_auth"
            ? [
                { name: "username", secret: false, required: true },
                { name: "password", secret: true, required: true },
              ]
            : [];
      if (fields.length === 0) {
        throw new AtriumError(
          Code.FailedPrecondition,
          `provider ${provider.id} (${provider.auth_type}) takes no static credential`,
        );
      }
      return {
        providerId: provider.id,
        authType: provider.auth_type,
        fields,
        validatable: Boolean(provider.api_base_url || provider.user_info_endpoint),
      };
    },

    async startOAuth(request) {
      const started = await connections.startOAuth({
        providerId: request.providerId,
        workspaceId: request.workspaceId,
        returnUrl: request.returnUrl,
        scopes: request.scopes,
        redirectUri: request.redirectUri,
      });
      return {
        authorizationUrl: started.authorizationUrl,
        state: started.state,
        expiresAt: ts(started.expiresAt),
      };
    },
    async completeOAuth(request, context) {
      const params = new URLSearchParams();
      for (const [key, value] of Object.entries({
        code: request.code,
        state: request.state,
        iss: request.iss,
        error: request.error,
        error_description: request.errorDescription,
      })) {
        if (value) params.set(key, value);
      }
      const done = await connections.completeOAuth(params, callerFrom(context));
      return { connection: await summary(done.connection), returnUrl: done.returnUrl };
    },
    async startSaml(request) {
      return saml.start({
        providerId: request.providerId,
        workspaceId: request.workspaceId,
        returnUrl: request.returnUrl,
      });
    },
    async completeSaml(request, context) {
      const done = await saml.complete(
        request.samlResponse,
        request.relayState,
        callerFrom(context),
      );
      return { connection: await summary(done.connection), returnUrl: done.returnUrl };
    },
    async captureCredential(request, context) {
      const row = await connections.captureStatic(
        {
          providerId: request.providerId,
          workspaceId: request.workspaceId,
          apiKey: request.apiKey,
          username: request.username,
          password: request.password,
        },
        callerFrom(context),
      );
      return summary(row);
    },

    async listConnections(request) {
      const rows = await connections.list(request.workspaceId || undefined);
      const names = await providerNames(rows);
      return { connections: rows.map((r) => connectionSummary(r, names.get(r.provider_id))) };
    },
    async getConnection(request) {
      return summary(await connections.get(request.id, request.workspaceId || undefined));
    },
    getConnectionToken: (request, context) =>
      retrieveToken(connections, request, callerFrom(context)),
    getConnectionTokens: createTokenRetrievals(connections, ctx.logger),
    async refreshConnection(request) {
      const row = await connections.refresh(request.id, request.workspaceId || undefined);
      return {
        connectionId: row.id,
        status: row.status,
        healthStatus: row.health_status,
        expiresAt: ts(row.expires_at),
        refreshedAt: ts(row.last_refreshed_at),
      };
    },
    async revokeConnection(request, context) {
      const result = await connections.revoke(request.id, {
        workspaceId: request.workspaceId || undefined,
        reason: request.reason || undefined,
        caller: callerFrom(context),
      });
      return {
        connectionId: result.connection_id,
        tokenDeleted: result.token_deleted,
        providerRevoked: result.provider_revoked,
        providerRevocationError: result.provider_revocation_error,
        revokedAt: ts(new Date(result.revoked_at)),
        reason: result.reason,
      };
    },

    ...createAgentHandlers(createAgentStore(ctx.sql), connections),
    ...createWebhookHandlers(webhooks),

    async listAuditEvents(request) {
      const page = await queryAuditEvents(ctx.sql, {
        eventType: request.eventType || undefined,
        resourceId: request.resourceId || undefined,
        since: request.since || undefined,
        until: request.until || undefined,
        limit: request.limit,
        offset: request.offset,
      });
      return {
        events: page.events.map(auditMessage),
        total: page.total,
        limit: page.limit,
        offset: page.offset,
      };
    },
  };
}
