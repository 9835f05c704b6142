import { createApiKeyCheck } from "./api-key.js";
import { AuthenticationError } from "./authentication-error.js";
import type { Authenticator } from "./identity.js";
import { createJwtCheck } from "./jwt.js";

export interface AuthenticatorOptions {
  /** Shared API key; absent switches API key auth off. */
  apiKey?: string;
  /** HS256 secret for JWTs; absent switches JWT auth off. */
  jwtSecret?: string;
  /** Require a client certificate verified against the CA at the TLS layer. */
  mtls?: boolean;
}

/** True when any mechanism is on; a host skips the authenticator otherwise. */
export function authEnabled(options: AuthenticatorOptions): boolean {
  return Boolean(options.apiKey || options.jwtSecret || options.mtls);
}

/** Runs the enabled checks in the spec's order (mTLS, API key, JWT); all must pass. */
export function createAuthenticator(options: AuthenticatorOptions): Authenticator {
  const checkApiKey = options.apiKey ? createApiKeyCheck(options.apiKey) : undefined;
  const checkJwt = options.jwtSecret ? createJwtCheck(options.jwtSecret) : undefined;
  return {
    async authenticate(request) {
      if (options.mtls && !request.clientCertificateVerified) {
        throw new AuthenticationError("mtls", "verified client certificate required");
      }
      checkApiKey?.(request.headers);
      return checkJwt ? await checkJwt(request.headers) : undefined;
    },
  };
}
