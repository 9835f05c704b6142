import { Code } from "../errors.js";
import { apiKeyAuthenticator, createApiKeySet } from "./api-key-set.js";
import { AuthenticationError, type AuthMechanism } from "./authentication-error.js";
import type { Authenticator } from "./identity.js";
import { createJwtCheck, type JwtOptions } from "./jwt.js";

export interface AuthenticatorOptions {
  /** Shared API key; absent switches API key auth off. */
  apiKey?: string;
  /** JWT key source and claim checks; absent switches JWT auth off. */
  jwt?: JwtOptions;
  /** Require a client certificate verified against the CA at the TLS layer. */
  mtls?: boolean;
}

/** True when any mechanism is on; a host skips the authenticator otherwise. */
export function authEnabled(options: AuthenticatorOptions): boolean {
  return Boolean(options.apiKey || options.jwt || options.mtls);
}

/** Runs the enabled checks in the spec's order (mTLS, API key, JWT); all must pass. */
export function createAuthenticator(options: AuthenticatorOptions): Authenticator {
  // The platform's one key check, with memory's contract: the key may come as a Bearer token,
  // and a wrong one is 401 like a missing one.
  const checkApiKey = options.apiKey
    ? apiKeyAuthenticator({
        keys: createApiKeySet({ keys: [options.apiKey], files: [], reloadMs: 0 }),
        wrongKey: Code.Unauthenticated,
        acceptBearer: true,
      })
    : undefined;
  const checkJwt = options.jwt ? createJwtCheck(options.jwt) : undefined;
  const mechanisms: AuthMechanism[] = [
    ...(options.mtls ? (["mtls"] as const) : []),
    ...(checkApiKey ? (["api_key"] as const) : []),
    ...(checkJwt ? (["jwt"] as const) : []),
  ];
  return {
    mechanisms,
    async authenticate(request) {
      if (options.mtls && !request.clientCertificateVerified) {
        throw new AuthenticationError("mtls", "verified client certificate required");
      }
      await checkApiKey?.authenticate(request);
      return checkJwt ? await checkJwt(request.headers) : undefined;
    },
  };
}
