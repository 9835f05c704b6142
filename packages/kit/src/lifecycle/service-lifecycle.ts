import type { Logger } from "pino";

/** What every service's start function returns, and `atrium start` runs. */
export interface RunningService {
  name: string;
  urls: { rest: string; grpc?: string };
  /** Idempotent: a second call waits for the first. */
  stop(): Promise<void>;
}

export interface ResourceStack {
  /** Registers how to close something just opened; closes run newest first. */
  defer(close: () => unknown): void;
  /**
   * Closes everything once; later calls get the same promise. A close that fails is logged and
   * the others still run, so one stuck dependency does not leak the rest.
   */
  close(): Promise<void>;
}

export function createResourceStack(logger: Logger): ResourceStack {
  const closes: (() => unknown)[] = [];
  let closing: Promise<void> | undefined;
  return {
    defer(close) {
      closes.push(close);
    },
    close() {
      closing ??= (async () => {
        for (const close of closes.reverse()) {
          try {
            await close();
          } catch (error) {
            logger.warn({ err: error }, "close failed");
          }
        }
      })();
      return closing;
    },
  };
}

/**
 * A service's start-up: `start` opens resources onto the stack it is given; if it throws, what it
 * opened is closed before the error reaches the caller, so a failed start leaves nothing behind.
 */
export async function startService<T>(
  logger: Logger,
  start: (resources: ResourceStack) => Promise<T>,
): Promise<T> {
  const resources = createResourceStack(logger);
  try {
    return await start(resources);
  } catch (error) {
    await resources.close();
    throw error;
  }
}
