#!/usr/bin/env node
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { startBrokerService } from "@atrium/broker";
import { startAgentService } from "@atrium/chat";
import { startGatewayService } from "@atrium/gateway";
import {
  createLogger,
  logLevel,
  type RunningService,
  shutdownGraceMs,
  startTracing,
  synchronousStdout,
  type Tracing,
} from "@atrium/kit";
import { startStdioBridge } from "@atrium/mcp";
import { startMemoryService } from "@atrium/memory";
import { startedBanner } from "./banner.js";
import { parseDotenv } from "./dev-keys.js";
import {
  embeddedEnv,
  type ServiceLauncher,
  type ServiceName,
  serviceLines,
  serviceNamed,
  serviceNames,
  startInOrder,
  stopAll,
} from "./launch.js";
import { assertPortsFree, connectHost, namePortInUse, resolvePorts } from "./ports.js";

const launchers: Record<ServiceName, ServiceLauncher> = {
  memory: startMemoryService,
  broker: startBrokerService,
  gateway: startGatewayService,
  chat: startAgentService,
};

const usage = `usage:
  atrium start                 run every service in one process with embedded defaults
  atrium serve <service>       run one service (${serviceNames.join(", ")}; agent is chat's
                               former name and still runs it)
  atrium mcp                   stdio MCP server for desktop clients, relaying to the gateway's
                               /mcp (ATRIUM_GATEWAY_URL, default http://127.0.0.1:8082 moved
                               by the port settings; ATRIUM_API_KEY, a gateway key with an MCP
                               scope, default GATEWAY_API_KEYS of ./data/dev.env)
  atrium version               print the version`;

/** The development gateway key `atrium start` wrote, for `atrium mcp` run beside it. */
function gatewayKeyFromDevEnv(env: NodeJS.ProcessEnv): string | undefined {
  const path = resolve(env.ATRIUM_DATA_DIR ?? "./data", "dev.env");
  if (!existsSync(path)) return undefined;
  return parseDotenv(readFileSync(path, "utf8")).GATEWAY_API_KEYS?.split(",")[0].trim();
}

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
  return pkg.version;
}

/**
 * SIGTERM/SIGINT drain every service (each host cuts what is still open two seconds before the
 * grace ends); the process is gone by SHUTDOWN_GRACE_MS even if a cleanup step hangs.
 */
function stopOnSignals(running: RunningService[], tracing?: Tracing): void {
  const graceMs = shutdownGraceMs(process.env);
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    setTimeout(() => {
      console.error(`atrium: not stopped within SHUTDOWN_GRACE_MS (${graceMs} ms); exiting`);
      process.exit(1);
    }, graceMs).unref();
    await stopAll(running);
    // The last spans (the drain's requests) are sent before the process goes.
    await tracing?.shutdown().catch(() => undefined);
    process.exit(0);
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

async function main(args: string[]): Promise<number> {
  const [command, target] = args;
  if (command === "version" || command === "--version") {
    console.log(version());
    return 0;
  }
  if (command === "start") {
    const { env, devKeysPath, ports, gatewayUrl, devGatewayKey } = await embeddedEnv({
      // Each request's line waits for LOG_LEVEL=debug: start-up, warnings and errors stay in view.
      REQUEST_LOG_LEVEL: "debug",
      ...process.env,
    });
    const host = env.MEMORY_HOST ?? "127.0.0.1";
    await assertPortsFree(ports, host);
    console.log(`atrium ${version()}: development keys in ${devKeysPath}`);
    const stdout = synchronousStdout();
    const level = logLevel(env);
    // One process: one service.name (`atrium`); each service names its spans' tracer.
    const tracing = await startTracing({ serviceName: "atrium", serviceVersion: version() });
    const running = await startInOrder(
      serviceNames.map((name) => [name, launchers[name]]),
      env,
      (name) => createLogger({ name, level, destination: stdout }),
    ).catch((error: unknown) => {
      throw namePortInUse(error, ports, host);
    });
    stopOnSignals(running, tracing);
    console.log(
      startedBanner(running, {
        devKeysPath,
        dataDir: env.ATRIUM_DATA_DIR!,
        gatewayUrl,
        devGatewayKey,
        atriumBin: fileURLToPath(new URL("../bin/atrium.js", import.meta.url)),
      }),
    );
    return -1;
  }
  if (command === "mcp") {
    const apiKey = process.env.ATRIUM_API_KEY || gatewayKeyFromDevEnv(process.env);
    if (!apiKey) {
      console.error(
        "atrium mcp: set ATRIUM_API_KEY to a gateway key that has an MCP scope (or run `atrium start` first: its key is GATEWAY_API_KEYS in ./data/dev.env)",
      );
      return 2;
    }
    const gateway =
      process.env.ATRIUM_GATEWAY_URL ||
      `http://${connectHost(process.env.ATRIUM_HOST ?? "127.0.0.1")}:${resolvePorts(process.env).GATEWAY_REST_PORT}`;
    // stdout carries the protocol: every diagnostic goes to stderr.
    const bridge = await startStdioBridge({
      url: new URL(`${gateway.replace(/\/$/, "")}/mcp`),
      apiKey,
      onError: (error) => console.error(`atrium mcp: ${error.message}`),
    });
    await bridge.closed;
    return 0;
  }
  const service = command === "serve" ? serviceNamed(target) : undefined;
  if (service) {
    const logger = createLogger({ name: service, level: logLevel(process.env) });
    const tracing = await startTracing({
      serviceName: `atrium-${service}`,
      serviceVersion: version(),
    });
    const running = [await launchers[service]({ env: process.env, logger })];
    stopOnSignals(running, tracing);
    console.log(serviceLines(running).join("\n"));
    return -1;
  }
  console.error(usage);
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (error: unknown) => {
    console.error(`atrium: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
