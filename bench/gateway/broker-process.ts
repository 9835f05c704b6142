// The broker in a process of its own for bench/gateway, so the gateway's figures do not include
// the broker's CPU. Prints one JSON line with its URLs, stops on SIGTERM.
import { startBrokerService } from "@atrium/broker";
import { createLogger } from "@atrium/kit";

const broker = await startBrokerService({
  env: process.env,
  logger: createLogger({ name: "broker", level: "warn" }),
});
process.stdout.write(`${JSON.stringify(broker.urls)}\n`);
process.once("SIGTERM", () => {
  void broker.stop().then(() => process.exit(0));
});
