// Child process of the benchmark: the memory service and a no-op Fastify route in one process,
// so that the load generator (the parent) does not share their event loop. Prints one JSON line
// with the URLs, stops on SIGTERM.
import { createLogger } from "@atrium/kit";
import { startMemoryService } from "@atrium/memory";
import Fastify from "fastify";

const service = await startMemoryService({
  env: process.env,
  logger: createLogger({ name: "memory", level: "warn" }),
});
const noop = Fastify();
noop.get("/noop", async () => ({ ok: true }));
const noopUrl = await noop.listen({ host: "127.0.0.1", port: 0 });
process.stdout.write(`${JSON.stringify({ ...service.urls, noop: noopUrl })}\n`);
process.once("SIGTERM", async () => {
  await noop.close();
  await service.stop();
  process.exit(0);
});
