import { AtriumError, Code } from "@atrium/kit";
import { SAML, ValidateInResponseTo } from "@node-saml/node-saml";
import type { CallerContext } from "../audit/audit-log.js";
import { writeAuditEvent } from "../audit/audit-log.js";
import type { BrokerContext } from "../broker-context.js";
import type { ConnectionRecord } from "../connections/connection-record.js";
import type { ConnectionService } from "../connections/connection-service.js";
import type { FlowState } from "../oauth/state-token.js";
import type { ProviderRecord } from "../providers/provider-store.js";

export interface SamlFlow {
  start(request: {
    providerId: string;
    workspaceId: string;
    returnUrl: string;
  }): Promise<{ redirectUrl: string; relayState: string }>;
  complete(
    samlResponse: string,
    relayState: string,
    caller: CallerContext,
  ): Promise<{ connection: ConnectionRecord; returnUrl: string }>;
}

const invalid = (message: string) => new AtriumError(Code.InvalidArgument, message);

/**
 * SAML service-provider flow (HTTP-Redirect AuthnRequest, HTTP-POST response). The sealed
 * RelayState carries provider, workspace and return URL, so any broker instance can take the
 * POST and no request-id cache is shared between instances.
 */
export function createSamlFlow(
  ctx: BrokerContext,
  connections: ConnectionService,
  options: { acsUrl: string },
): SamlFlow {
  function client(provider: ProviderRecord): SAML {
    return new SAML({
      entryPoint: provider.saml_idp_sso_url,
      issuer: provider.saml_sp_entity_id,
      callbackUrl: options.acsUrl,
      idpCert: provider.saml_idp_x509_cert,
      idpIssuer: provider.saml_idp_entity_id,
      audience: provider.saml_sp_entity_id,
      wantAssertionsSigned: true,
      // The assertion signature is what binds the identity; many IdPs do not sign the envelope.
      wantAuthnResponseSigned: false,
      validateInResponseTo: ValidateInResponseTo.never,
      acceptedClockSkewMs: 60_000,
    });
  }

  async function samlProvider(id: string): Promise<ProviderRecord> {
    const provider = await ctx.providers.get(id);
    if (provider.auth_type !== "saml") throw invalid(`provider ${id} is not a saml provider`);
    return provider;
  }

  return {
    async start(request) {
      const provider = await samlProvider(request.providerId);
      const relayState = connections.newState(
        "saml",
        { providerId: provider.id, workspaceId: request.workspaceId, returnUrl: request.returnUrl },
        provider,
      );
      const redirectUrl = await client(provider).getAuthorizeUrlAsync(relayState, undefined, {});
      return { redirectUrl, relayState };
    },

    async complete(samlResponse, relayState, caller) {
      if (!samlResponse) throw invalid("saml_response is required");
      let state: FlowState;
      try {
        state = ctx.states.decode(relayState);
      } catch (error) {
        throw invalid(`invalid relay_state: ${(error as Error).message}`);
      }
      if (state.kind !== "saml") throw invalid("relay_state does not belong to a SAML flow");
      const provider = await samlProvider(state.providerId);
      let profile: Awaited<ReturnType<SAML["validatePostResponseAsync"]>>["profile"];
      try {
        ({ profile } = await client(provider).validatePostResponseAsync({
          SAMLResponse: samlResponse,
          RelayState: relayState,
        }));
      } catch (error) {
        const reason = error instanceof Error ? error.message : "invalid SAML response";
        await ctx.sql.transaction((tx) =>
          writeAuditEvent(tx, {
            eventType: "token.exchange_failed",
            resourceId: provider.id,
            caller,
            data: { provider_id: provider.id, workspace_id: state.workspaceId, error: reason },
          }),
        );
        throw invalid(`SAML response rejected: ${reason}`);
      }
      if (!profile?.nameID) throw invalid("SAML response carries no NameID");
      const attributes: Record<string, string> = {};
      for (const [key, value] of Object.entries(profile.attributes ?? {})) {
        attributes[key] = Array.isArray(value) ? value.map(String).join(",") : String(value);
      }
      const connection = await connections.createConnection(
        {
          provider,
          workspaceId: state.workspaceId,
          credential: { name_id: profile.nameID, attributes },
          scopes: [],
          subject: profile.nameID,
          method: "saml",
        },
        caller,
      );
      return { connection, returnUrl: state.returnUrl };
    },
  };
}
