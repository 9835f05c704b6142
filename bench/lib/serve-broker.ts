// The broker in a process of its own for the benches (see startBrokerProcess). Prints one JSON
// line with its URLs, stops on SIGTERM.
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
