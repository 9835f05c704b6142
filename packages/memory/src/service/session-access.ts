import { identityKey, notFound } from "@atrium/kit";
import type { HandlerContext } from "@connectrpc/connect";
import type { SessionRecord } from "../domain.js";
import type { SessionStore } from "../store/sessions.js";

/**
 * Ownership: the session a request names, or NotFound. With a JWT identity only the identity's
 * own sessions exist, so another user's session id is indistinguishable from an unknown one.
 */
export function createSessionAccess(sessions: SessionStore) {
  return async function resolveSession(
    sessionId: string,
    context: HandlerContext,
  ): Promise<SessionRecord> {
    const session = await sessions.get(sessionId);
    const identity = context.values.get(identityKey);
    if (
      !session ||
      (identity && (identity.tenantId !== session.tenantId || identity.userId !== session.userId))
    ) {
      throw notFound(`session ${JSON.stringify(sessionId)} not found`);
    }
    return session;
  };
}
