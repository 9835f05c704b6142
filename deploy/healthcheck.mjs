// The image's HEALTHCHECK: GET /health of the service this container runs (`serve <service>`,
// read from PID 1's command line; `start` checks the gateway), on its REST port. Exit 0 when the
// service answers 200, whether healthy or degraded: a degraded service still serves.
// ATRIUM_HEALTH_URL overrides the address (a service behind TLS, a moved port).
import { readFileSync } from "node:fs";

const ports = {
  memory: ["MEMORY_REST_PORT", 8080],
  broker: ["BROKER_REST_PORT", 8081],
  gateway: ["GATEWAY_REST_PORT", 8082],
  chat: ["AGENT_PORT", 8000],
  // The chat host's former name, which `atrium serve` still takes.
  agent: ["AGENT_PORT", 8000],
};

function serviceOfPid1() {
  const args = readFileSync("/proc/1/cmdline", "utf8").split("\0");
  const serve = args.indexOf("serve");
  return serve >= 0 ? args[serve + 1] : "gateway";
}

function healthUrl() {
  if (process.env.ATRIUM_HEALTH_URL) return process.env.ATRIUM_HEALTH_URL;
  const [variable, fallback] = ports[serviceOfPid1()] ?? ports.gateway;
  return `http://127.0.0.1:${process.env[variable] ?? fallback}/health`;
}

try {
  const res = await fetch(healthUrl(), { signal: AbortSignal.timeout(3000) });
  process.exit(res.status === 200 ? 0 : 1);
} catch {
  process.exit(1);
}
