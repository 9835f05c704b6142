import type { Server } from "node:net";
import { z } from "zod";
import { envInteger } from "../config/env-values.js";
import { type Env, loadConfig } from "../config/load-config.js";
import type { Logger } from "../logger/logger.js";
import { isLoopbackAddress } from "./public-address.js";

export interface ConnectionLimitOptions {
  /** Connections one address may hold open at once; 0 for no limit. */
  perClient: number;
  /** Addresses the limit does not apply to. */
  exempt?: (address: string) => boolean;
  /** Told of each connection refused. */
  onRefused?: (address: string) => void;
}

/**
 * Closes, as soon as it is accepted, a connection from an address that already holds
 * `perClient` open ones: one client (a slow-body attack, a leaking pool) cannot take every
 * socket the process has. Counted per peer address, before TLS and HTTP, so it holds for
 * REST and the HTTP/2 port alike.
 */
export function limitConnectionsPerClient(server: Server, options: ConnectionLimitOptions): void {
  if (options.perClient <= 0) return;
  const open = new Map<string, number>();
  server.on("connection", (socket) => {
    const address = socket.remoteAddress ?? "";
    if (options.exempt?.(address)) return;
    const count = open.get(address) ?? 0;
    if (count >= options.perClient) {
      options.onRefused?.(address);
      socket.destroy();
      return;
    }
    open.set(address, count + 1);
    socket.once("close", () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left > 0) open.set(address, left);
      else open.delete(address);
    });
  });
}

export interface RefusalLogOptions {
  logger: Pick<Logger, "warn">;
  /** The limit, named in each line so an operator sees what was hit. */
  perClient: number;
  /** At most one line per client address per interval; default `refusalLogIntervalMs`. */
  intervalMs?: number;
}

export const refusalLogIntervalMs = 60_000;

/**
 * The `onRefused` of a port: a client refused is worth an operator's attention (an attack, a
 * leaking pool), but one line per refused connection would let that client flood the log. The
 * first refusal of an address is logged at once; the refusals that follow within the interval
 * are counted and logged as one line when it ends, for as long as they continue. Only the
 * address is logged: nothing the client sent is read before it is refused.
 */
export function createRefusalLog(options: RefusalLogOptions): (address: string) => void {
  const intervalMs = options.intervalMs ?? refusalLogIntervalMs;
  /** Addresses in a logging interval, and their refusals not logged yet. */
  const unlogged = new Map<string, number>();
  const log = (address: string, refused: number) =>
    options.logger.warn(
      { callerAddress: address, refused, perClient: options.perClient, intervalMs },
      "connections refused: client over the per-client connection limit",
    );
  const endInterval = (address: string) => {
    const refused = unlogged.get(address) ?? 0;
    if (refused === 0) {
      unlogged.delete(address);
      return;
    }
    log(address, refused);
    unlogged.set(address, 0);
    setTimeout(endInterval, intervalMs, address).unref();
  };
  return (address) => {
    const refused = unlogged.get(address);
    if (refused !== undefined) {
      unlogged.set(address, refused + 1);
      return;
    }
    log(address, 1);
    unlogged.set(address, 0);
    setTimeout(endInterval, intervalMs, address).unref();
  };
}

/**
 * A client on the same machine is not limited: it can exhaust the process anyway, and a local
 * reverse proxy or bench carries many clients on one address.
 */
export const exemptLoopback = isLoopbackAddress;

export const defaultConnectionsPerClient = 256;

/** `MAX_CONNECTIONS_PER_CLIENT`: connections one address may hold open at once; 0 for no limit. */
export function connectionsPerClient(env: Env): number {
  return loadConfig(
    z.object({
      MAX_CONNECTIONS_PER_CLIENT: envInteger({ min: 0, max: 1_000_000 }).default(
        defaultConnectionsPerClient,
      ),
    }),
    env,
  ).MAX_CONNECTIONS_PER_CLIENT;
}
