// Child process of the benchmark: the memory service, a no-op Fastify route and a no-op gRPC
// method (Connect's Node handler on its own HTTP/2 server, as the service host served every call
// before its direct gRPC path; bench/grpc compares the transports) in one process, so that the
// load generator (the parent) does not share their event loop. Prints one JSON line with the
// URLs, stops on SIGTERM. With OTEL_EXPORTER_OTLP_ENDPOINT set it traces as `atrium serve memory`.
import * as http2 from "node:http2";
import { memoryV1 } from "@atrium/api";
import { createLogger, startTracing } from "@atrium/kit";
import { startMemoryService } from "@atrium/memory";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import Fastify from "fastify";

const tracing = await startTracing({ serviceName: "atrium-memory" });
const service = await startMemoryService({
  env: process.env,
  logger: createLogger({ name: "memory", level: "warn" }),
});
const noop = Fastify();
noop.get("/noop", async () => ({ ok: true }));
const noopUrl = await noop.listen({ host: "127.0.0.1", port: 0 });
const noopGrpc = http2.createServer(
  connectNodeAdapter({
    routes: (router) =>
      router.service(memoryV1.MemoryService, {
        healthCheck: async () => ({ status: "healthy", dependencies: {} }),
      }),
  }),
);
await new Promise<void>((resolve) => noopGrpc.listen(0, "127.0.0.1", resolve));
const grpcPort = (noopGrpc.address() as { port: number }).port;
process.stdout.write(
  `${JSON.stringify({ ...service.urls, noop: noopUrl, noopGrpc: `http://127.0.0.1:${grpcPort}` })}\n`,
);
process.once("SIGTERM", async () => {
  // The load generator's HTTP/2 session may still be open: do not wait for it to go.
  noopGrpc.close();
  await noop.close();
  await service.stop();
  await tracing?.shutdown();
  process.exit(0);
});
