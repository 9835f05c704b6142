import type { ConnectionToken, CredentialStrategy } from "./gateway-types.js";
import type { FetchLike } from "./http-client.js";
import { injectCredential, resolveStrategy } from "./strategies/inject-credential.js";
import { userAgent } from "./version.js";

export interface ConnectionScope {
  /** When given, a connection of another workspace answers 404. */
  workspaceId?: string;
  signal?: AbortSignal;
}

export interface GetTokenOptions extends ConnectionScope {
  /** Skip the cache and ask the gateway (which refreshes an expired token itself). */
  bypassCache?: boolean;
}

export interface FetcherOptions {
  workspaceId?: string;
  /** Overrides the strategy the gateway derived from the provider. */
  strategy?: CredentialStrategy;
  /**
   * On a 401 from the upstream, an oauth2 fetcher refreshes the connection through the gateway and
   * sends the request once more. Default true.
   */
  refreshOnUnauthorized?: boolean;
}

/**
 * Where a fetcher gets a connection's token and asks for a refresh: the gateway client over
 * HTTP, or the gateway itself calling its own handlers (its MCP endpoint).
 */
export interface ConnectionTokens {
  getToken(connectionId: string, options?: GetTokenOptions): Promise<ConnectionToken>;
  refreshConnection(connectionId: string, options?: ConnectionScope): Promise<unknown>;
}

export interface CredentialFetcherOptions extends FetcherOptions {
  /** Sends the prepared requests. Default: global fetch. */
  fetch?: FetchLike;
}

/** A fetch that injects the connection's credential into every request it sends. */
export function createCredentialFetcher(
  tokens: ConnectionTokens,
  connectionId: string,
  options: CredentialFetcherOptions = {},
): FetchLike {
  const scope = { workspaceId: options.workspaceId };
  const refreshOnUnauthorized = options.refreshOnUnauthorized ?? true;
  const send: FetchLike = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  return async (input, init) => {
    const original = new Request(input, init);
    // Buffered once: signing strategies need the bytes, and a retry must resend them.
    const body = original.body ? new Uint8Array(await original.arrayBuffer()) : undefined;
    const headers = new Headers(original.headers);
    // The caller's own User-Agent wins; otherwise the resource sees who is calling.
    if (!headers.has("user-agent")) headers.set("user-agent", userAgent);
    const attempt = async (token: ConnectionToken) => {
      const strategy = resolveStrategy(token, options.strategy);
      const prepared = await injectCredential(
        { url: new URL(original.url), method: original.method, headers, body },
        token,
        strategy,
      );
      const response = await send(prepared.url, {
        method: prepared.method,
        headers: prepared.headers,
        body: prepared.body,
        redirect: original.redirect,
        signal: original.signal,
      });
      return { response, strategy };
    };
    const first = await attempt(await tokens.getToken(connectionId, scope));
    if (
      first.response.status !== 401 ||
      first.strategy.type !== "oauth2" ||
      !refreshOnUnauthorized
    ) {
      return first.response;
    }
    await first.response.body?.cancel();
    await tokens.refreshConnection(connectionId, scope);
    const retried = await attempt(
      await tokens.getToken(connectionId, { ...scope, bypassCache: true }),
    );
    return retried.response;
  };
}
