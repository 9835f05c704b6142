// Child process of the gRPC benchmark: one no-op method (MemoryService/HealthCheck) served three
// ways in one process, so that the load generator (the parent) does not share their event loop:
// Atrium's service host (kit's gRPC server with its interceptors), a bare `@grpc/grpc-js` server
// (the reference) and Connect's Node handler alone (what the service host ran every call through
// before). All three decode the request and encode the answer with the generated schemas.
// Prints one JSON line with the URLs, stops on SIGTERM.
import * as http2 from "node:http2";
import { memoryV1 } from "@atrium/api";
import { createLogger, createServiceHost } from "@atrium/kit";
import { create, type DescService, fromBinary, toBinary } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";

const { MemoryService, HealthCheckRequestSchema, HealthCheckResponseSchema } = memoryV1;
const healthy = { status: "healthy" };
const noopImplementation: Partial<ServiceImpl<typeof MemoryService>> = {
  healthCheck: () => healthy,
};

const host = createServiceHost({
  name: "noop",
  logger: createLogger({ name: "noop", level: "warn" }),
  rest: { host: "127.0.0.1", port: 0 },
  grpc: { host: "127.0.0.1", port: 0 },
  services: [
    {
      service: MemoryService,
      implementation: noopImplementation as Partial<ServiceImpl<DescService>>,
    },
  ],
});
const { grpcUrl } = await host.start();

const grpcJs = new grpc.Server();
grpcJs.addService(
  {
    healthCheck: {
      path: "/memory.v1.MemoryService/HealthCheck",
      requestStream: false,
      responseStream: false,
      requestDeserialize: (bytes: Buffer) => fromBinary(HealthCheckRequestSchema, bytes),
      requestSerialize: () => Buffer.alloc(0),
      responseSerialize: (value: typeof healthy) =>
        Buffer.from(toBinary(HealthCheckResponseSchema, create(HealthCheckResponseSchema, value))),
      responseDeserialize: () => healthy,
    },
  },
  {
    healthCheck: (_call: unknown, done: grpc.sendUnaryData<typeof healthy>) => done(null, healthy),
  },
);
const grpcJsPort = await new Promise<number>((resolve, reject) =>
  grpcJs.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (error, port) =>
    error ? reject(error) : resolve(port),
  ),
);

const connect = http2.createServer(
  connectNodeAdapter({
    routes: (router) => router.service(MemoryService, noopImplementation),
  }),
);
await new Promise<void>((resolve) => connect.listen(0, "127.0.0.1", resolve));
const connectPort = (connect.address() as { port: number }).port;

process.stdout.write(
  `${JSON.stringify({
    atrium: grpcUrl,
    grpcJs: `http://127.0.0.1:${grpcJsPort}`,
    connect: `http://127.0.0.1:${connectPort}`,
  })}\n`,
);
process.once("SIGTERM", async () => {
  // The load generator's HTTP/2 sessions may still be open: do not wait for them to go.
  connect.close();
  grpcJs.forceShutdown();
  await host.stop();
  process.exit(0);
});
