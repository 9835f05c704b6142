import { z } from "zod";
import { envInteger } from "../config/env-values.js";
import { type Env, loadConfig } from "../config/load-config.js";

export const defaultShutdownGraceMs = 10_000;

/**
 * `SHUTDOWN_GRACE_MS`: how long a stopping process may take, whatever its clients do. The host
 * gives in-flight requests all but the last two seconds of it (see `drainDeadlineMs`), so the
 * cleanup after the cut (queue, worker threads, pools) still ends inside it.
 */
export function shutdownGraceMs(env: Env): number {
  return loadConfig(
    z.object({
      SHUTDOWN_GRACE_MS: envInteger({ min: 0, max: 3_600_000 }).default(defaultShutdownGraceMs),
    }),
    env,
  ).SHUTDOWN_GRACE_MS;
}

/** When connections still open are cut: two seconds before the grace ends, or half-way. */
export function drainDeadlineMs(graceMs: number): number {
  return Math.max(graceMs - 2000, graceMs / 2);
}
