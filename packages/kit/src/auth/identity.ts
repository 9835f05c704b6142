import { createContextKey } from "@connectrpc/connect";

/** Who the caller is, when JWT auth supplies it. */
export interface Identity {
  tenantId: string;
  userId: string;
  agentId?: string;
}

/** Read by handlers on both transports: `context.values.get(identityKey)`. */
export const identityKey = createContextKey<Identity | undefined>(undefined, {
  description: "identity from a verified JWT",
});

/** What a request looks like to the authenticator, whatever the transport. */
export interface AuthRequest {
  headers: Headers;
  /** Set when the TLS layer verified a client certificate chain against the CA. */
  clientCertificateVerified: boolean;
  /**
   * The RPC called, `/package.Service/Method`: on gRPC, and on a REST route transcoded from an
   * RPC, so a rule about an RPC holds on both transports alike.
   */
  procedure?: string;
  /** REST only: the HTTP method and the URL path without its query. */
  method?: string;
  path?: string;
}

/**
 * Runs the enabled checks in the order mTLS, API key, JWT. Throws an Unauthenticated
 * AtriumError naming nothing secret; returns the identity when JWT is on.
 */
export interface Authenticator {
  authenticate(request: AuthRequest): Promise<Identity | undefined>;
}
