import { createServer } from "node:net";
import { ConfigError, type Env } from "@atrium/kit";

/** The port settings of the four services, with the defaults the services themselves use. */
export const defaultPorts = {
  AGENT_PORT: 8000,
  MEMORY_REST_PORT: 8080,
  MEMORY_GRPC_PORT: 9090,
  BROKER_REST_PORT: 8081,
  BROKER_GRPC_PORT: 9091,
  GATEWAY_REST_PORT: 8082,
  GATEWAY_GRPC_PORT: 9092,
} as const;

export type PortVariable = keyof typeof defaultPorts;

export type Ports = Record<PortVariable, number>;

export const portVariables = Object.keys(defaultPorts) as PortVariable[];

const maxOffset = 65_535 - Math.max(...Object.values(defaultPorts));

function integer(name: string, value: string, min: number, max: number): number {
  const trimmed = value.trim();
  const parsed = Number(trimmed);
  if (!/^\d+$/.test(trimmed) || parsed < min || parsed > max) {
    throw new ConfigError(
      `invalid configuration: ${name} must be an integer from ${min} to ${max}`,
    );
  }
  return parsed;
}

/**
 * Every port `atrium start` listens on: a port variable the operator set is taken as it is; the
 * others are their default plus ATRIUM_PORT_OFFSET, so one variable moves a whole platform.
 */
export function resolvePorts(env: Env): Ports {
  const offset =
    env.ATRIUM_PORT_OFFSET === undefined || env.ATRIUM_PORT_OFFSET.trim() === ""
      ? 0
      : integer("ATRIUM_PORT_OFFSET", env.ATRIUM_PORT_OFFSET, 0, maxOffset);
  const ports = {} as Ports;
  for (const variable of portVariables) {
    const set = env[variable];
    ports[variable] =
      set === undefined || set.trim() === ""
        ? defaultPorts[variable] + offset
        : integer(variable, set, 0, 65_535);
  }
  return ports;
}

/** Where the services reach one another: loopback when they listen on every interface. */
export function connectHost(listenHost: string): string {
  if (listenHost === "0.0.0.0" || listenHost === "::" || listenHost === "") return "127.0.0.1";
  return listenHost.includes(":") ? `[${listenHost}]` : listenHost;
}

/** The variable that moves a port, for an error about that port. */
export function portVariableOf(ports: Ports, port: number): PortVariable | undefined {
  return portVariables.find((variable) => ports[variable] === port);
}

export function portInUseMessage(variable: PortVariable, port: number, host: string): string {
  return `port ${port} on ${host} is already in use (${variable}): set ${variable} to a free port, or ATRIUM_PORT_OFFSET (e.g. ATRIUM_PORT_OFFSET=10000) to move every port`;
}

function listenOnce(port: number, host: string): Promise<NodeJS.ErrnoException | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", (error: NodeJS.ErrnoException) => resolve(error));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(undefined)));
  });
}

/**
 * Fails at once, naming the variable, when a port is taken, instead of after the services before
 * it have started (and with Node's bare `EADDRINUSE`). Port 0 (any free port) is not checked.
 */
export async function assertPortsFree(ports: Ports, host: string): Promise<void> {
  for (const variable of portVariables) {
    const port = ports[variable];
    if (port === 0) continue;
    const error = await listenOnce(port, host);
    if (error?.code === "EADDRINUSE") {
      throw new ConfigError(portInUseMessage(variable, port, host));
    }
  }
}

/** Node's bare `listen EADDRINUSE` (a port taken after the check) with the variable named. */
export function namePortInUse(error: unknown, ports: Ports, host: string): unknown {
  const failure = error as NodeJS.ErrnoException & { port?: number };
  if (failure?.code !== "EADDRINUSE" || typeof failure.port !== "number") return error;
  const variable = portVariableOf(ports, failure.port);
  return variable ? new ConfigError(portInUseMessage(variable, failure.port, host)) : error;
}
