// Runs test/sdk-services-harness.ts for the Python and Go SDK suites: prints one JSON line with
// the services' URLs and stays up until stdin closes, so a test runner in any language owns its
// lifetime.
//
//   node --conditions=atrium-source --import tsx test/sdk-services.ts
import { startSdkServices } from "./sdk-services-harness.js";

const services = await startSdkServices();
console.log(JSON.stringify(services.urls));

const shutdown = async () => {
  await services.stop();
  process.exit(0);
};
process.stdin.resume();
process.stdin.on("end", shutdown);
process.on("SIGTERM", shutdown);
