import { createContextKey } from "@connectrpc/connect";
import type { AuthMechanism } from "./authentication-error.js";

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
  /**
   * The checks every request it admits has passed; absent when some routes are exempt, so that
   * a request is never said to have proved what it was not asked for.
   */
  readonly mechanisms?: readonly AuthMechanism[];
}

/** Who the host's authentication admitted a request as (never read from what the caller says). */
export type Principal =
  /** A verified JWT's subject. */
  | { kind: "user"; identity: Identity }
  /** The service's API key, which names no person. */
  | { kind: "api_key" }
  /** A client certificate verified against the CA (mTLS alone). */
  | { kind: "client_certificate" }
  /** Nothing was checked: the host runs without authentication. */
  | { kind: "anonymous" };
