import { Code, ConnectError, type Interceptor, type UnaryRequest } from "@connectrpc/connect";
import type { GatewayClient } from "./gateway-client.js";
import type { CredentialStrategy } from "./gateway-types.js";
import { injectCredential, resolveStrategy } from "./strategies/inject-credential.js";

export interface CredentialInterceptorOptions {
  workspaceId?: string;
  /** Overrides the strategy the gateway derived from the provider. */
  strategy?: CredentialStrategy;
}

/** Strategies that live in headers; the signing ones sign an HTTP body gRPC frames differently. */
const metadataStrategies = new Set(["oauth2", "api_key", "basic_auth"]);

/**
 * A Connect interceptor (for gRPC, gRPC-Web and Connect transports) that puts the connection's
 * credential into every call's metadata, fresh from the gateway's token cache. When a unary call
 * of an oauth2 connection answers UNAUTHENTICATED, the connection is refreshed through the
 * gateway and the call sent once more; a streamed call is not repeated, since its request
 * messages are already consumed. A revoked or attention-required connection fails the call before
 * it is sent: Connect's client wraps the error, so it is the ConnectError's `cause`
 * (ConnectionRevokedError / AttentionRequiredError).
 */
export function createCredentialInterceptor(
  gateway: GatewayClient,
  connectionId: string,
  options: CredentialInterceptorOptions = {},
): Interceptor {
  const scope = { workspaceId: options.workspaceId };
  const inject = async (header: Headers, url: string, bypassCache: boolean) => {
    const token = await gateway.getToken(connectionId, { ...scope, bypassCache });
    const strategy = resolveStrategy(token, options.strategy);
    if (!metadataStrategies.has(strategy.type)) {
      throw new Error(`${strategy.type} credentials cannot be sent as gRPC metadata`);
    }
    const prepared = await injectCredential(
      { url: new URL(url), method: "POST", headers: new Headers(), body: undefined },
      token,
      strategy,
    );
    prepared.headers.forEach((value, name) => {
      header.set(name, value);
    });
    return strategy.type;
  };
  return (next) => async (request) => {
    const strategy = await inject(request.header, request.url, false);
    try {
      return await next(request);
    } catch (error) {
      const retriable =
        !request.stream &&
        strategy === "oauth2" &&
        ConnectError.from(error).code === Code.Unauthenticated;
      if (!retriable) throw error;
      await gateway.refreshConnection(connectionId, scope);
      await inject(request.header, request.url, true);
      return next(request as UnaryRequest);
    }
  };
}
