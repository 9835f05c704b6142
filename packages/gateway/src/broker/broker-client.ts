import { brokerV1 } from "@atrium/api";
import { createGrpcClientTransport } from "@atrium/kit";
import { type CallOptions, ConnectError, createClient } from "@connectrpc/connect";
import { fromBrokerGrpcError, isTransportFailure } from "./broker-errors.js";
import { type BrokerClient, createBrokerRestClient } from "./broker-rest-client.js";
import { createTokenGathering } from "./token-gathering.js";

export type { BrokerClient } from "./broker-rest-client.js";

export interface BrokerClientOptions {
  /** The broker's REST base (BROKER_URL). */
  restUrl: string;
  /** The broker's gRPC base (BROKER_GRPC_URL); without it every call goes over REST. */
  grpcUrl?: string;
  apiKey: string;
  /** Deadline of each call on either transport. */
  timeoutMs: number;
  /**
   * After a gRPC transport failure, calls go straight to REST for this long before gRPC is tried
   * again, so an outage costs one failed dial, not one per call. Default 5 s.
   */
  grpcRetryAfterMs?: number;
  /** Told once per transport failure that sent a call over REST. */
  onFallback?: (method: string, error: unknown) => void;
  /** Told which transport answered each call (metrics). */
  onAnswered?: (method: string, transport: "grpc" | "rest") => void;
}

export interface BrokerConnection {
  client: BrokerClient;
  /** Which transport the last call used (tests and metrics). */
  lastTransport(): "grpc" | "rest";
  close(): void;
}

type UnaryCall = (request: unknown, options?: CallOptions) => Promise<unknown>;

/**
 * gRPC first (one kept-alive HTTP/2 session), the same call over REST when gRPC fails in transport.
 * Application errors are never retried on the other transport; both transports surface them as
 * the same AtriumError (REST bodies kept exactly).
 */
export function createBrokerClient(options: BrokerClientOptions): BrokerConnection {
  const rest = createBrokerRestClient({
    baseUrl: options.restUrl,
    apiKey: options.apiKey,
    timeoutMs: options.timeoutMs,
  });
  let last: "grpc" | "rest" = options.grpcUrl ? "grpc" : "rest";
  const restCalls = rest as unknown as Record<string, UnaryCall>;
  const overRest = async (method: string, name: string, request: unknown, call?: CallOptions) => {
    last = "rest";
    const result = await restCalls[name](request, call);
    options.onAnswered?.(method, "rest");
    return result;
  };
  if (!options.grpcUrl) {
    const client: Record<string, UnaryCall> = {};
    for (const method of brokerV1.BrokerService.methods) {
      client[method.localName] = (request, call) =>
        overRest(method.name, method.localName, request, call);
    }
    return { client: client as unknown as BrokerClient, lastTransport: () => last, close() {} };
  }

  const transport = createGrpcClientTransport({
    baseUrl: options.grpcUrl,
    defaultTimeoutMs: options.timeoutMs,
    interceptors: [
      (next) => (request) => {
        request.header.set("x-api-key", options.apiKey);
        return next(request);
      },
    ],
  });
  const grpc = createClient(brokerV1.BrokerService, transport) as unknown as Record<
    string,
    UnaryCall
  >;
  // Concurrent token reads share one stream (token-gathering.ts); every other method is one call.
  grpc.getConnectionToken = createTokenGathering({
    one: grpc.getConnectionToken as never,
    many: grpc.getConnectionTokens as never,
  }) as UnaryCall;
  const retryAfterMs = options.grpcRetryAfterMs ?? 5_000;
  let grpcDownUntil = 0;

  const client: Record<string, UnaryCall> = {};
  for (const method of brokerV1.BrokerService.methods) {
    const name = method.localName;
    client[name] = async (request, call) => {
      if (Date.now() >= grpcDownUntil) {
        try {
          const result = await grpc[name](request, call);
          last = "grpc";
          options.onAnswered?.(method.name, "grpc");
          return result;
        } catch (error) {
          if (!isTransportFailure(error, call?.signal))
            throw fromBrokerGrpcError(ConnectError.from(error));
          grpcDownUntil = Date.now() + retryAfterMs;
          options.onFallback?.(method.name, error);
        }
      }
      return overRest(method.name, name, request, call);
    };
  }
  return {
    client: client as unknown as BrokerClient,
    lastTransport: () => last,
    close: () => transport.close(),
  };
}
