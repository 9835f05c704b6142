import { createRemoteJWKSet, jwtVerify } from "jose";
import * as oauth from "oauth4webapi";
import type { ProviderRecord } from "../providers/provider-store.js";

/** Tokens as stored (encrypted) for an OAuth connection. */
export interface TokenSet {
  access_token: string;
  token_type: string;
  refresh_token?: string;
  id_token?: string;
  scope?: string;
  /** Seconds, as the provider sent it; absent when the provider omitted it. */
  expires_in?: number;
  /** `sub` of a verified id_token. */
  subject?: string;
}

/** A provider answer that will not get better by retrying (4xx such as invalid_grant). */
export class ProviderRejectedError extends Error {
  constructor(
    readonly status: number,
    readonly oauthError: string,
    message: string,
  ) {
    super(message);
    this.name = "ProviderRejectedError";
  }
}

/** Network failure or 5xx: worth retrying with backoff. */
export class ProviderUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ProviderUnavailableError";
  }
}

export interface OAuthClientOptions {
  /** How long a discovery document is reused. */
  discoveryTtlMs?: number;
  /** Deadline of every call to a provider (token, discovery). */
  requestTimeoutMs?: number;
  /** For tests and the benchmark; defaults to global fetch. */
  fetch?: typeof fetch;
}

export interface AuthorizationRequest {
  redirectUri: string;
  scopes: string[];
  state: string;
  codeChallenge: string;
  nonce?: string;
}

export interface OAuthClient {
  authorizationUrl(provider: ProviderRecord, request: AuthorizationRequest): Promise<URL>;
  exchangeCode(
    provider: ProviderRecord,
    clientSecret: string | undefined,
    exchange: {
      callbackParams: URLSearchParams;
      redirectUri: string;
      codeVerifier: string;
      nonce?: string;
    },
  ): Promise<TokenSet>;
  refresh(
    provider: ProviderRecord,
    clientSecret: string | undefined,
    refreshToken: string,
  ): Promise<TokenSet>;
  /** Undefined when the provider advertises no revocation endpoint. */
  revocationEndpoint(provider: ProviderRecord): Promise<string | undefined>;
  revoke(
    provider: ProviderRecord,
    clientSecret: string | undefined,
    token: string,
    hint: "refresh_token" | "access_token",
    signal: AbortSignal,
  ): Promise<void>;
}

const isLoopback = (url: string) => {
  try {
    return ["localhost", "127.0.0.1", "[::1]"].includes(new URL(url).hostname);
  } catch {
    return false;
  }
};

/** True when the provider's endpoints come from OIDC discovery. */
export function usesDiscovery(provider: ProviderRecord): boolean {
  if (provider.enable_discovery) return true;
  return (
    Boolean(provider.issuer || provider.well_known_url) &&
    !(provider.auth_url && provider.token_url)
  );
}

export function createOAuthClient(options: OAuthClientOptions = {}): OAuthClient {
  const ttl = options.discoveryTtlMs ?? 3_600_000;
  const timeout = options.requestTimeoutMs ?? 10_000;
  const doFetch = options.fetch ?? fetch;
  const discovered = new Map<string, { at: number; as: oauth.AuthorizationServer }>();
  const jwks = new Map<string, ReturnType<typeof createRemoteJWKSet>>();

  function httpOptions(
    provider: ProviderRecord,
    url: string,
    options: { signal?: AbortSignal; tokenEndpoint?: boolean } = {},
  ) {
    const { signal } = options;
    // JSON bodies are a token endpoint quirk; revocation (RFC 7009) stays form-encoded.
    const jsonBody =
      options.tokenEndpoint === true && provider.params?.token_request_format === "json";
    return {
      signal: signal ?? AbortSignal.timeout(timeout),
      [oauth.allowInsecureRequests]: isLoopback(url),
      [oauth.customFetch]: (target: string, init: oauth.CustomFetchOptions<string, unknown>) => {
        // token_request_format=json: same parameters, sent as a JSON object.
        if (jsonBody && init.body instanceof URLSearchParams && init.method === "POST") {
          const headers = { ...init.headers, "content-type": "application/json" };
          const body = JSON.stringify(Object.fromEntries(init.body));
          return doFetch(target, { ...init, headers, body } as RequestInit);
        }
        return doFetch(target, init as RequestInit);
      },
    };
  }

  async function discover(provider: ProviderRecord): Promise<oauth.AuthorizationServer> {
    const key = provider.well_known_url || provider.issuer;
    const hit = discovered.get(key);
    if (hit && Date.now() - hit.at < ttl) return hit.as;
    let as: oauth.AuthorizationServer;
    try {
      if (provider.well_known_url) {
        const response = await doFetch(provider.well_known_url, {
          signal: AbortSignal.timeout(timeout),
        });
        if (!response.ok) throw new Error(`discovery answered ${response.status}`);
        as = (await response.json()) as oauth.AuthorizationServer;
        if (provider.issuer && as.issuer !== provider.issuer) {
          throw new Error(`discovery issuer ${as.issuer} does not match ${provider.issuer}`);
        }
      } else {
        const issuer = new URL(provider.issuer);
        const response = await oauth.discoveryRequest(issuer, {
          algorithm: "oidc",
          ...httpOptions(provider, provider.issuer),
        });
        as = await oauth.processDiscoveryResponse(issuer, response);
      }
    } catch (error) {
      throw new ProviderUnavailableError(`OIDC discovery failed for provider ${provider.name}`, {
        cause: error,
      });
    }
    discovered.set(key, { at: Date.now(), as });
    return as;
  }

  /** Discovered metadata with explicit auth_url/token_url winning over what discovery says. */
  async function server(provider: ProviderRecord): Promise<oauth.AuthorizationServer> {
    if (usesDiscovery(provider)) {
      const as = await discover(provider);
      return {
        ...as,
        authorization_endpoint: provider.auth_url || as.authorization_endpoint,
        token_endpoint: provider.token_url || as.token_endpoint,
      };
    }
    return {
      issuer: provider.issuer || new URL(provider.token_url).origin,
      authorization_endpoint: provider.auth_url,
      token_endpoint: provider.token_url,
      revocation_endpoint: provider.params?.revocation_endpoint || undefined,
    };
  }

  function clientAuth(
    as: oauth.AuthorizationServer,
    provider: ProviderRecord,
    secret: string | undefined,
  ): oauth.ClientAuth {
    if (!secret) return oauth.None();
    const method =
      provider.params?.token_endpoint_auth_method ??
      (as.token_endpoint_auth_methods_supported?.includes("client_secret_basic") === false &&
      as.token_endpoint_auth_methods_supported?.includes("client_secret_post")
        ? "client_secret_post"
        : "client_secret_basic");
    return method === "client_secret_post"
      ? oauth.ClientSecretPost(secret)
      : oauth.ClientSecretBasic(secret);
  }

  function classify(error: unknown, what: string): Error {
    if (error instanceof oauth.ResponseBodyError) {
      if (error.status >= 400 && error.status < 500) {
        return new ProviderRejectedError(
          error.status,
          error.error,
          `${what} rejected by provider: ${error.error}`,
        );
      }
      return new ProviderUnavailableError(`${what} failed: provider answered ${error.status}`);
    }
    if (error instanceof ProviderRejectedError || error instanceof ProviderUnavailableError) {
      return error;
    }
    if (error instanceof oauth.OperationProcessingError || error instanceof TypeError) {
      // Malformed answers and network errors (fetch throws TypeError) are both transient to us.
      return new ProviderUnavailableError(`${what} failed: ${error.message}`, { cause: error });
    }
    if (error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError")) {
      return new ProviderUnavailableError(`${what} timed out`, { cause: error });
    }
    return error instanceof Error ? error : new Error(String(error));
  }

  function toTokenSet(response: oauth.TokenEndpointResponse, subject?: string): TokenSet {
    return {
      access_token: response.access_token,
      token_type: String(response.token_type ?? "bearer"),
      refresh_token: response.refresh_token,
      id_token: response.id_token,
      scope: response.scope,
      expires_in: typeof response.expires_in === "number" ? response.expires_in : undefined,
      subject,
    };
  }

  /** JWKS signature on top of oauth4webapi's iss/aud/exp/nonce checks. */
  async function verifyIdTokenSignature(
    as: oauth.AuthorizationServer,
    clientId: string,
    idToken: string,
  ): Promise<void> {
    if (!as.jwks_uri)
      throw new ProviderRejectedError(
        400,
        "invalid_id_token",
        "no jwks_uri to verify the id_token",
      );
    let keySet = jwks.get(as.jwks_uri);
    if (!keySet) {
      keySet = createRemoteJWKSet(new URL(as.jwks_uri));
      jwks.set(as.jwks_uri, keySet);
    }
    try {
      await jwtVerify(idToken, keySet, { issuer: as.issuer, audience: clientId });
    } catch (error) {
      throw new ProviderRejectedError(
        400,
        "invalid_id_token",
        `id_token verification failed: ${(error as Error).message}`,
      );
    }
  }

  return {
    async authorizationUrl(provider, request) {
      const as = await server(provider);
      if (!as.authorization_endpoint) throw new Error("provider has no authorization endpoint");
      const url = new URL(as.authorization_endpoint);
      url.searchParams.set("response_type", "code");
      url.searchParams.set("client_id", provider.client_id);
      url.searchParams.set("redirect_uri", request.redirectUri);
      url.searchParams.set("state", request.state);
      url.searchParams.set("code_challenge", request.codeChallenge);
      url.searchParams.set("code_challenge_method", "S256");
      if (request.scopes.length > 0 && provider.params?.skip_scope_on_auth !== "true") {
        url.searchParams.set("scope", request.scopes.join(" "));
      }
      if (request.nonce) url.searchParams.set("nonce", request.nonce);
      // Provider params go on the authorization URL, except the broker's own settings.
      for (const [key, value] of Object.entries(provider.params ?? {})) {
        if (BROKER_PARAMS.has(key) || url.searchParams.has(key)) continue;
        url.searchParams.set(key, value);
      }
      return url;
    },

    async exchangeCode(provider, clientSecret, exchange) {
      const as = await server(provider);
      const client: oauth.Client = { client_id: provider.client_id };
      try {
        const params = oauth.validateAuthResponse(
          as,
          client,
          exchange.callbackParams,
          oauth.skipStateCheck,
        );
        const response = await oauth.authorizationCodeGrantRequest(
          as,
          client,
          clientAuth(as, provider, clientSecret),
          params,
          exchange.redirectUri,
          exchange.codeVerifier,
          httpOptions(provider, as.token_endpoint ?? "", { tokenEndpoint: true }),
        );
        const result = await oauth.processAuthorizationCodeResponse(as, client, response, {
          expectedNonce: exchange.nonce ?? oauth.expectNoNonce,
        });
        let subject: string | undefined;
        if (result.id_token) {
          await verifyIdTokenSignature(as, provider.client_id, result.id_token);
          subject = oauth.getValidatedIdTokenClaims(result)?.sub;
        }
        return toTokenSet(result, subject);
      } catch (error) {
        if (error instanceof oauth.AuthorizationResponseError) {
          throw new ProviderRejectedError(400, error.error, `authorization failed: ${error.error}`);
        }
        // A wrong nonce, audience, issuer or an expired id_token is a rejected login (possibly a
        // replay or a token meant for someone else), not an unreachable provider worth retrying.
        if (isIdTokenClaimFailure(error)) {
          throw new ProviderRejectedError(
            400,
            "invalid_id_token",
            `id_token rejected: ${(error as Error).message}`,
          );
        }
        throw classify(error, "code exchange");
      }
    },

    async refresh(provider, clientSecret, refreshToken) {
      const as = await server(provider);
      const client: oauth.Client = { client_id: provider.client_id };
      try {
        const response = await oauth.refreshTokenGrantRequest(
          as,
          client,
          clientAuth(as, provider, clientSecret),
          refreshToken,
          httpOptions(provider, as.token_endpoint ?? "", { tokenEndpoint: true }),
        );
        const result = await oauth.processRefreshTokenResponse(as, client, response);
        return toTokenSet(result);
      } catch (error) {
        throw classify(error, "token refresh");
      }
    },

    async revocationEndpoint(provider) {
      const as = await server(provider);
      return as.revocation_endpoint;
    },

    async revoke(provider, clientSecret, token, hint, signal) {
      const as = await server(provider);
      const client: oauth.Client = { client_id: provider.client_id };
      try {
        const response = await oauth.revocationRequest(
          as,
          client,
          clientAuth(as, provider, clientSecret),
          token,
          {
            additionalParameters: { token_type_hint: hint },
            ...httpOptions(provider, as.revocation_endpoint ?? "", { signal }),
          },
        );
        await oauth.processRevocationResponse(response);
      } catch (error) {
        throw classify(error, "revocation");
      }
    },
  };
}

function isIdTokenClaimFailure(error: unknown): boolean {
  return (
    error instanceof oauth.OperationProcessingError &&
    (error.code === oauth.JWT_CLAIM_COMPARISON || error.code === oauth.JWT_TIMESTAMP_CHECK)
  );
}

/** Params the broker itself interprets; never forwarded to the provider. */
const BROKER_PARAMS = new Set([
  "token_request_format",
  "skip_scope_on_auth",
  "token_endpoint_auth_method",
  "revocation_endpoint",
]);
