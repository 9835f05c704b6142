import { brokerV1 } from "@atrium/api";
import { createLogger, createServiceHost, restProtocolName, type ServiceHost } from "@atrium/kit";
import type { DescService } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";

export type BrokerImpl = Partial<ServiceImpl<typeof brokerV1.BrokerService>>;

export interface BrokerCall {
  method: string;
  transport: "grpc" | "rest";
  headers: Headers;
}

export interface ScriptedBroker {
  restUrl: string;
  grpcUrl: string;
  calls: BrokerCall[];
  /** Closes the gRPC listener only; REST keeps answering. */
  stopGrpc(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The broker's real contract (proto/broker/v1 on REST and gRPC through the kit host) answered by
 * a script. REST and gRPC are two hosts so a test can take gRPC down alone.
 */
export async function startScriptedBroker(implementation: BrokerImpl): Promise<ScriptedBroker> {
  const calls: BrokerCall[] = [];
  const recorded: Record<string, unknown> = {};
  for (const method of brokerV1.BrokerService.methods) {
    const handler = implementation[method.localName as keyof BrokerImpl] as
      | ((request: unknown, context: HandlerContext) => unknown)
      | undefined;
    if (!handler) continue;
    recorded[method.localName] = (request: unknown, context: HandlerContext) => {
      calls.push({
        method: method.name,
        transport: context.protocolName === restProtocolName ? "rest" : "grpc",
        headers: context.requestHeader,
      });
      return handler(request, context);
    };
  }
  const services = [
    {
      service: brokerV1.BrokerService as DescService,
      implementation: recorded as Partial<ServiceImpl<DescService>>,
    },
  ];
  const logger = createLogger({ name: "scripted-broker", level: "silent" });
  const restHost: ServiceHost = createServiceHost({
    name: "broker-rest",
    logger,
    rest: { host: "127.0.0.1", port: 0 },
    services,
  });
  const grpcHost: ServiceHost = createServiceHost({
    name: "broker-grpc",
    logger,
    rest: { host: "127.0.0.1", port: 0 },
    grpc: { host: "127.0.0.1", port: 0 },
    services,
  });
  const { restUrl } = await restHost.start();
  const { grpcUrl } = await grpcHost.start();
  let grpcStopped = false;
  const stopGrpc = async () => {
    if (grpcStopped) return;
    grpcStopped = true;
    await grpcHost.stop();
  };
  return {
    restUrl,
    grpcUrl: grpcUrl ?? "",
    calls,
    stopGrpc,
    async stop() {
      await stopGrpc();
      await restHost.stop();
    },
  };
}
