import {
  Code,
  ConnectError,
  type Interceptor,
  type StreamRequest,
  type StreamResponse,
  type UnaryRequest,
} from "@connectrpc/connect";
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
 * credential into every call's metadata, fresh from the gateway's token cache. When a call of an
 * oauth2 connection answers UNAUTHENTICATED, the connection is refreshed through the gateway and
 * the call sent once more. A streaming call is repeated only if the refusal came before any
 * response message: the request messages the transport had already taken are sent again first,
 * then the caller's stream goes on where it was, so the server receives each exactly once on the
 * call it accepted. A revoked or attention-required connection fails the call before it is sent:
 * Connect's client wraps the error, so it is the ConnectError's `cause`
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
  const refused = (error: unknown, strategy: string) =>
    strategy === "oauth2" && ConnectError.from(error).code === Code.Unauthenticated;
  const renew = async (request: UnaryRequest | StreamRequest) => {
    await gateway.refreshConnection(connectionId, scope);
    await inject(request.header, request.url, true);
  };

  return (next) => async (request) => {
    const strategy = await inject(request.header, request.url, false);
    if (request.stream) {
      // A stream request gets a stream response (Connect's AnyFn does not say so in its type).
      const streamNext = next as (request: StreamRequest) => Promise<StreamResponse>;
      return streamWithRetry(request, streamNext, (error) => refused(error, strategy), renew);
    }
    try {
      return await next(request);
    } catch (error) {
      if (!refused(error, strategy)) throw error;
      await renew(request);
      return next(request);
    }
  };
}

/** Records the request messages as the transport takes them, so a retry can send them again. */
function recording<T>(messages: AsyncIterable<T>) {
  const taken: T[] = [];
  const iterator = messages[Symbol.asyncIterator]();
  // A pull the first attempt started may still be under way when the retry begins: its message
  // belongs in the replay, not to the caller's stream a second time.
  let pulling: Promise<unknown> = Promise.resolve();
  const rest: AsyncIterable<T> = {
    [Symbol.asyncIterator]: () => ({
      next: () => iterator.next(),
      return: (value?: unknown) =>
        iterator.return?.(value) ?? Promise.resolve({ done: true, value: undefined }),
    }),
  };
  const first: AsyncIterable<T> = {
    async *[Symbol.asyncIterator]() {
      for (;;) {
        const pull = iterator.next();
        pulling = pull.catch(() => undefined);
        const item = await pull;
        if (item.done) return;
        taken.push(item.value);
        yield item.value;
      }
    },
  };
  return {
    first,
    /** What was taken, then the caller's stream from where it was. */
    replay: async function* () {
      await pulling;
      yield* taken;
      yield* rest;
    },
  };
}

async function streamWithRetry(
  request: StreamRequest,
  next: (request: StreamRequest) => Promise<StreamResponse>,
  refused: (error: unknown) => boolean,
  renew: (request: StreamRequest) => Promise<void>,
): Promise<StreamResponse> {
  const messages = recording(request.message);
  let retried = false;
  const retry = async () => {
    retried = true;
    await renew(request);
    return next({ ...request, message: messages.replay() });
  };
  let response: StreamResponse;
  try {
    response = await next({ ...request, message: messages.first });
  } catch (error) {
    if (!refused(error)) throw error;
    return retry();
  }
  const firstMessages = response.message;
  return {
    ...response,
    message: (async function* () {
      let received = false;
      try {
        for await (const message of firstMessages) {
          received = true;
          yield message;
        }
      } catch (error) {
        if (received || retried || !refused(error)) throw error;
        // Refused before any answer: nothing of this call reached the application.
        yield* (await retry()).message;
      }
    })(),
  };
}
