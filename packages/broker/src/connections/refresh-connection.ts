import type { BrokerContext } from "../broker-context.js";
import type { ConnectionRecord } from "./connection-record.js";
import { connectionStore } from "./connection-store.js";
import { assertUsable, type TokenRefresher } from "./token-refresher.js";

/** An explicit refresh: done even when the token is fresh; the connection must stay usable. */
export async function refreshConnection(
  ctx: BrokerContext,
  refresher: TokenRefresher,
  id: string,
  workspaceId: string | undefined,
): Promise<ConnectionRecord> {
  const row = await connectionStore.load(ctx.sql, id, workspaceId);
  const { connection } = await refresher.refresh(row, { force: true });
  assertUsable(connection);
  return connection;
}
