import type { Redis } from "ioredis";
import type { Logger } from "pino";

/** A component's Redis connections went down (first failure) or are all back up. */
export interface RedisStateChange {
  component: string;
  state: "down" | "up";
  error?: unknown;
}

export type RedisStateReporter = (change: RedisStateChange) => void;

export const warnRedisState: RedisStateReporter = ({ component, state, error }) => {
  const detail = error instanceof Error ? error.message || (error as { code?: string }).code : "";
  process.emitWarning(
    state === "down"
      ? `${component}: Redis unreachable${detail ? ` (${detail})` : ""}; working without it and reconnecting`
      : `${component}: Redis reachable again`,
    { code: "ATRIUM_REDIS" },
  );
};

/** The service's line for each state change: warn when Redis goes away, info when it is back. */
export function logRedisState(logger: Logger): RedisStateReporter {
  return ({ component, state, error }) => {
    if (state === "down") {
      logger.warn(
        { err: error, component },
        `${component}: Redis unreachable; working without it and reconnecting`,
      );
    } else logger.info({ component }, `${component}: Redis reachable again`);
  };
}

const connectionCodes = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "ENOTFOUND"]);

/**
 * A call refused or failed because Redis is away or too slow, not because of what it asked: the
 * cache and the queue throw it (the ioredis failure as its cause) so callers can fall back.
 */
export class RedisUnavailableError extends Error {
  constructor(message = "Redis is unavailable", options?: ErrorOptions) {
    super(message, options);
    this.name = "RedisUnavailableError";
  }
}

/**
 * Whether an error is Redis being away rather than a command or job failing: by its class, or by
 * a socket code. (ioredis words a closed connection, a timed-out command or a refused offline
 * command with no code; the cache and the queue, which see the connection, say so by the class.)
 */
export function isRedisConnectionError(error: unknown): boolean {
  if (error instanceof RedisUnavailableError) return true;
  const { code } = (error ?? {}) as { code?: unknown };
  return typeof code === "string" && connectionCodes.has(code);
}

export interface RedisStateTracker {
  /** Listens to a connection's errors (so none goes unhandled) and its drops and recoveries. */
  track(connection: Redis): void;
  /** An error reported elsewhere (a BullMQ worker's): only the first of an outage is told. */
  noteError(error: unknown): void;
  /** Nothing is reported after this: connections closing on purpose are not an outage. */
  stop(): void;
}

/**
 * One warning per state change of a component, however many connections it has and however often
 * ioredis retries: the first failure says Redis is down, the moment every connection is ready
 * again says it is back.
 */
export function createRedisStateTracker(
  component: string,
  report: RedisStateReporter = warnRedisState,
): RedisStateTracker {
  const connections = new Set<Redis>();
  let down = false;
  let stopped = false;
  const goDown = (error: unknown) => {
    if (down || stopped) return;
    down = true;
    report({ component, state: "down", error });
  };
  return {
    track(connection) {
      connections.add(connection);
      connection.on("error", goDown);
      connection.on("close", () => goDown(new Error("Connection is closed")));
      connection.on("ready", () => {
        if (!down || stopped) return;
        if ([...connections].every((c) => c.status === "ready")) {
          down = false;
          report({ component, state: "up" });
        }
      });
    },
    noteError: goDown,
    stop() {
      stopped = true;
    },
  };
}
