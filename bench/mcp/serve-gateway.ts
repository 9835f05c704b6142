// Child process of the MCP benchmark: a gateway configured as the parent's (its env), logging at
// info into nothing, so that the MCP client (the parent) does not share its event loop, as a
// desktop or agent client never does. Prints one JSON line with its URL, stops on SIGTERM.
import { Writable } from "node:stream";
import { startGatewayService } from "@atrium/gateway";
import { createLogger } from "@atrium/kit";

const discard = new Writable({
  write(_chunk, _encoding, done) {
    done();
  },
});
const gateway = await startGatewayService({
  env: process.env,
  logger: createLogger({ name: "gateway", level: "info", destination: discard }),
});
process.stdout.write(`${JSON.stringify({ rest: gateway.urls.rest })}\n`);
process.once("SIGTERM", async () => {
  await gateway.stop();
  process.exit(0);
});
