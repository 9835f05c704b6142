import { resolve } from "node:path";
import type { Env, Logger, RunningService } from "@atrium/kit";
import { ensureDevKeys } from "./dev-keys.js";

export type ServiceName = "memory" | "broker" | "gateway" | "agent";

export const serviceNames: ServiceName[] = ["memory", "broker", "gateway", "agent"];

export type ServiceLauncher = (options: { env: Env; logger?: Logger }) => Promise<RunningService>;

/**
 * The environment `atrium start` gives every service: embedded defaults under the data
 * directory, development keys from dev.env, and the gateway pointed at the in-process broker.
 * Variables the operator set always win.
 */
export async function embeddedEnv(env: Env): Promise<{ env: Env; devKeysPath: string }> {
  const dataDir = resolve(env.ATRIUM_DATA_DIR ?? "./data");
  const devKeys = await ensureDevKeys(dataDir);
  const brokerKey = (env.API_KEYS ?? devKeys.keys.API_KEYS).split(",")[0].trim();
  // The all-in-one runs with auth off by default, so it listens on loopback unless told otherwise.
  const host = env.ATRIUM_HOST ?? "127.0.0.1";
  return {
    devKeysPath: devKeys.path,
    env: {
      ...devKeys.keys,
      BLOB_STORE_URL: `file://${resolve(dataDir, "blobs")}`,
      BROKER_URL: "http://127.0.0.1:8081",
      BROKER_GRPC_URL: "http://127.0.0.1:9091",
      BROKER_API_KEY: brokerKey,
      MEMORY_URL: "http://127.0.0.1:8080",
      MEMORY_GRPC_URL: "http://127.0.0.1:9090",
      // The gateway (MCP's ask, the console's traces) follows the agent host's port.
      AGENT_CHAT_URL: `http://127.0.0.1:${env.AGENT_PORT ?? "8000"}/api/v1`,
      MEMORY_HOST: host,
      BROKER_HOST: host,
      GATEWAY_HOST: host,
      AGENT_HOST: host,
      ...env,
      ATRIUM_DATA_DIR: dataDir,
    },
  };
}

/** Starts services in order; if one fails, the ones already up are stopped before rethrowing. */
export async function startInOrder(
  launchers: [ServiceName, ServiceLauncher][],
  env: Env,
  loggerFor?: (name: ServiceName) => Logger,
): Promise<RunningService[]> {
  const running: RunningService[] = [];
  try {
    for (const [name, launch] of launchers) {
      running.push(await launch({ env, logger: loggerFor?.(name) }));
    }
  } catch (error) {
    await stopAll(running);
    throw error;
  }
  return running;
}

export async function stopAll(running: RunningService[]): Promise<void> {
  for (const service of [...running].reverse()) {
    await service.stop().catch(() => {});
  }
}

export function serviceLines(running: RunningService[]): string[] {
  return running.map((service) => {
    const grpc = service.urls.grpc ? `  gRPC ${service.urls.grpc}` : "";
    return `  ${service.name.padEnd(8)} REST ${service.urls.rest}${grpc}`;
  });
}

/** What `atrium start` prints last: where each service is and what a newcomer does next. */
export function startedBanner(
  running: RunningService[],
  paths: { devKeys: string; dataDir: string },
): string {
  const memory = running.find((service) => service.name === "memory");
  return [
    "",
    "Atrium is running:",
    ...serviceLines(running),
    "",
    "Next:",
    "  walkthrough   README.md (Quick start), then docs/memory.md, docs/chat.md, docs/gateway.md",
    `  dev keys      ${paths.devKeys} (the broker's X-API-Key is API_KEYS there)`,
    ...(memory ? [`  try it        curl -s ${memory.urls.rest}/api/v1/health`] : []),
    `  stop          Ctrl-C (data stays in ${paths.dataDir}; delete it to start over)`,
    "",
  ].join("\n");
}
