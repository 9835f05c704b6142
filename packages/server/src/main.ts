#!/usr/bin/env node
import { readFileSync } from "node:fs";
import { startBrokerService } from "@atrium/broker";
import { startAgentService } from "@atrium/chat";
import { startGatewayService } from "@atrium/gateway";
import { createLogger, type RunningService, shutdownGraceMs, synchronousStdout } from "@atrium/kit";
import { startStdioBridge } from "@atrium/mcp";
import { startMemoryService } from "@atrium/memory";
import {
  embeddedEnv,
  type ServiceLauncher,
  type ServiceName,
  serviceLines,
  serviceNames,
  startedBanner,
  startInOrder,
  stopAll,
} from "./launch.js";

const launchers: Record<ServiceName, ServiceLauncher> = {
  memory: startMemoryService,
  broker: startBrokerService,
  gateway: startGatewayService,
  agent: startAgentService,
};

const usage = `usage:
  atrium start                 run every service in one process with embedded defaults
  atrium serve <service>       run one service (${serviceNames.join(", ")})
  atrium mcp                   stdio MCP server for desktop clients, relaying to the gateway's
                               /mcp (ATRIUM_GATEWAY_URL, default http://127.0.0.1:8082;
                               ATRIUM_API_KEY, a gateway key with an MCP scope)
  atrium version               print the version`;

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
  return pkg.version;
}

/**
 * SIGTERM/SIGINT drain every service (each host cuts what is still open two seconds before the
 * grace ends); the process is gone by SHUTDOWN_GRACE_MS even if a cleanup step hangs.
 */
function stopOnSignals(running: RunningService[]): void {
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
    const { env, devKeysPath } = await embeddedEnv(process.env);
    console.log(`atrium ${version()}: development keys in ${devKeysPath}`);
    const stdout = synchronousStdout();
    const running = await startInOrder(
      serviceNames.map((name) => [name, launchers[name]]),
      env,
      (name) => createLogger({ name, destination: stdout }),
    );
    stopOnSignals(running);
    console.log(startedBanner(running, { devKeys: devKeysPath, dataDir: env.ATRIUM_DATA_DIR! }));
    return -1;
  }
  if (command === "mcp") {
    const apiKey = process.env.ATRIUM_API_KEY;
    if (!apiKey) {
      console.error("atrium mcp: set ATRIUM_API_KEY to a gateway key that has an MCP scope");
      return 2;
    }
    const gateway = process.env.ATRIUM_GATEWAY_URL ?? "http://127.0.0.1:8082";
    // stdout carries the protocol: every diagnostic goes to stderr.
    const bridge = await startStdioBridge({
      url: new URL(`${gateway.replace(/\/$/, "")}/mcp`),
      apiKey,
      onError: (error) => console.error(`atrium mcp: ${error.message}`),
    });
    await bridge.closed;
    return 0;
  }
  if (command === "serve" && serviceNames.includes(target as ServiceName)) {
    const running = [await launchers[target as ServiceName]({ env: process.env })];
    stopOnSignals(running);
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
