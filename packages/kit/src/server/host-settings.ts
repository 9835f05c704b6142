import type { Env } from "../config/load-config.js";
import { type RequestLogLevel, requestLogLevel } from "../logger/log-levels.js";
import { connectionsPerClient } from "./connection-limit.js";
import { shutdownGraceMs } from "./shutdown-grace.js";
import type { TransportLimits } from "./transport-limits.js";

/** The service-host settings every service reads from the same environment variables. */
export interface HostSettings {
  shutdownGraceMs: number;
  limits: Partial<TransportLimits>;
  requestLogLevel: RequestLogLevel;
}

/** `SHUTDOWN_GRACE_MS`, `MAX_CONNECTIONS_PER_CLIENT` and `REQUEST_LOG_LEVEL`, read once for a host. */
export function hostSettingsFromEnv(env: Env): HostSettings {
  return {
    shutdownGraceMs: shutdownGraceMs(env),
    limits: { connectionsPerClient: connectionsPerClient(env) },
    requestLogLevel: requestLogLevel(env),
  };
}
