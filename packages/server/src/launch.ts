import { resolve } from "node:path";
import { apiKeyDigestHex, type Env, type Logger, type RunningService } from "@atrium/kit";
import { ensureDevKeys } from "./dev-keys.js";
import { connectHost, type Ports, portVariables, resolvePorts } from "./ports.js";

export type ServiceName = "memory" | "broker" | "gateway" | "chat";

export const serviceNames: ServiceName[] = ["memory", "broker", "gateway", "chat"];

/** Names `atrium serve` also takes: `agent` is what the chat host was called first. */
export const serviceAliases: Readonly<Record<string, ServiceName>> = { agent: "chat" };

/** The service `atrium serve <name>` runs, its former names included. */
export function serviceNamed(name: string | undefined): ServiceName | undefined {
  if (name === undefined) return undefined;
  if (serviceNames.includes(name as ServiceName)) return name as ServiceName;
  return Object.hasOwn(serviceAliases, name) ? serviceAliases[name] : undefined;
}

export type ServiceLauncher = (options: { env: Env; logger?: Logger }) => Promise<RunningService>;

/** The scope the development gateway key has on /mcp (docs/mcp.md, "Keys and scopes"). */
export const devMcpScope = {
  tenant_id: "default",
  user_id: "dev",
  agent_id: "mcp",
  workspace_id: "default",
};

const isFalse = (value: string | undefined) =>
  value !== undefined && ["false", "0", "no", "off"].includes(value.trim().toLowerCase());

export interface EmbeddedEnv {
  env: Env;
  devKeysPath: string;
  ports: Ports;
  /** Where a client on this machine reaches the gateway (the console, /mcp). */
  gatewayUrl: string;
  /** The development gateway key, when the gateway runs with it (the operator set no keys). */
  devGatewayKey: string | undefined;
}

/**
 * The environment `atrium start` gives every service: embedded defaults under the data
 * directory, development keys from dev.env, the ports (ATRIUM_PORT_OFFSET moves them all), and
 * every service-to-service URL, the OAuth redirect and the SAML ACS URL derived from those ports,
 * so a moved platform never talks to another one. The gateway requires its inbound key (the
 * console's webhooks need that) and gives the development key an MCP scope. Variables the
 * operator set always win.
 */
export async function embeddedEnv(env: Env): Promise<EmbeddedEnv> {
  const dataDir = resolve(env.ATRIUM_DATA_DIR ?? "./data");
  const ports = resolvePorts(env);
  const devKeys = await ensureDevKeys(dataDir);
  const brokerKey = (env.API_KEYS ?? devKeys.keys.API_KEYS).split(",")[0].trim();
  // The all-in-one runs with development keys, so it listens on loopback unless told otherwise.
  const host = env.ATRIUM_HOST ?? "127.0.0.1";
  const to = connectHost(host);
  const url = (port: number, path = "") => `http://${to}:${port}${path}`;
  const keysOff = isFalse(env.GATEWAY_REQUIRE_API_KEY);
  const devKeyInUse = !keysOff && env.GATEWAY_API_KEYS === undefined;
  const devGatewayKey = devKeyInUse
    ? devKeys.keys.GATEWAY_API_KEYS.split(",")[0].trim()
    : undefined;
  const mcpScopes =
    devGatewayKey && env.GATEWAY_MCP_SCOPES_FILE === undefined
      ? {
          GATEWAY_MCP_SCOPES: JSON.stringify([
            { key_sha256: apiKeyDigestHex(devGatewayKey), ...devMcpScope },
          ]),
        }
      : {};
  return {
    devKeysPath: devKeys.path,
    ports,
    gatewayUrl: url(ports.GATEWAY_REST_PORT),
    devGatewayKey,
    env: {
      ...devKeys.keys,
      ...(keysOff ? {} : { GATEWAY_REQUIRE_API_KEY: "true" }),
      ...mcpScopes,
      BLOB_STORE_URL: `file://${resolve(dataDir, "blobs")}`,
      ...Object.fromEntries(portVariables.map((variable) => [variable, String(ports[variable])])),
      BROKER_URL: url(ports.BROKER_REST_PORT),
      BROKER_GRPC_URL: url(ports.BROKER_GRPC_PORT),
      BROKER_API_KEY: brokerKey,
      MEMORY_URL: url(ports.MEMORY_REST_PORT),
      MEMORY_GRPC_URL: url(ports.MEMORY_GRPC_PORT),
      // The gateway (MCP's ask, the console's traces) follows the agent host's port.
      AGENT_CHAT_URL: url(ports.AGENT_PORT, "/api/v1"),
      // A browser comes back to these, so they name localhost rather than the listening address.
      OAUTH_REDIRECT_URI: `http://localhost:${ports.GATEWAY_REST_PORT}/auth/callback`,
      SAML_ACS_URL: `http://localhost:${ports.BROKER_REST_PORT}/saml/acs`,
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
