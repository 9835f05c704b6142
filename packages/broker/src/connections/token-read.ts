import { AtriumError, Code } from "@atrium/kit";
import { type CallerContext, createAuditWriter } from "../audit/audit-log.js";
import type { BrokerContext } from "../broker-context.js";
import { type ConnectionRecord, type Credential, openCredential } from "./connection-record.js";
import {
  type ConnectionWithProviderParams,
  connectionStore,
  expiresSoon,
  pickConnection,
} from "./connection-store.js";
import { type CredentialStrategy, credentialStrategy } from "./credential-strategy.js";
import { assertUsable, type TokenRefresher } from "./token-refresher.js";

export interface TokenView {
  connection: ConnectionRecord;
  credential: Credential;
  strategy: CredentialStrategy;
}

/** One token read of a batch: the connection, the workspace it must be in, who asks. */
export interface TokenRead {
  id: string;
  workspaceId?: string;
  caller: CallerContext;
}

export interface TokenReader {
  token(id: string, workspaceId: string | undefined, caller: CallerContext): Promise<TokenView>;
  /**
   * Several reads whose connections are loaded by one query; each is then served as `token`
   * serves it (checked, refreshed, audited) and settles on its own, in order.
   */
  tokens(reads: TokenRead[]): Promise<PromiseSettledResult<TokenView>[]>;
}

/** Hands out connections' credentials; the retrieval audit events of concurrent reads share commits. */
export function createTokenReader(ctx: BrokerContext, refresher: TokenRefresher): TokenReader {
  const retrievals = createAuditWriter(ctx.sql);

  /** A loaded connection's credential, refreshed first when it expires soon; audited. */
  async function serveToken(
    loaded: ConnectionWithProviderParams,
    caller: CallerContext,
  ): Promise<TokenView> {
    let { connection } = loaded;
    const id = connection.id;
    assertUsable(connection);
    let credential: Credential | undefined;
    if (connection.auth_type === "oauth2" && expiresSoon(connection)) {
      ({ connection, credential } = await refresher.refresh(connection, { force: false }));
      assertUsable(connection);
    }
    try {
      credential ??= openCredential(ctx.vault, connection);
    } catch (error) {
      throw new AtriumError(Code.Internal, `credential of ${id} cannot be opened`, {
        cause: error,
      });
    }
    await retrievals.write({
      eventType: "token.retrieved",
      resourceId: id,
      caller,
      data: {
        connection_id: id,
        workspace_id: connection.workspace_id,
        provider_id: connection.provider_id,
      },
    });
    return {
      connection,
      credential,
      strategy: credentialStrategy(connection.auth_type, loaded.providerParams),
    };
  }

  return {
    async token(id, workspaceId, caller) {
      // Loaded once, with what picks the strategy; a refresh hands back the stored row and the
      // credential it sealed.
      return serveToken(
        await connectionStore.loadWithProviderParams(ctx.sql, id, workspaceId),
        caller,
      );
    },

    async tokens(reads) {
      const found = await connectionStore.loadManyWithProviderParams(ctx.sql, [
        ...new Set(reads.map((read) => read.id)),
      ]);
      return Promise.allSettled(
        reads.map(async (read) =>
          serveToken(pickConnection(found, read.id, read.workspaceId), read.caller),
        ),
      );
    },
  };
}
