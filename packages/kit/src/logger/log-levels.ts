import { z } from "zod";
import { type Env, loadConfig } from "../config/load-config.js";

const levels = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

export type LogLevel = (typeof levels)[number];

/** The level a request's "request completed" / "rpc completed" line is written at. */
export type RequestLogLevel = "info" | "debug";

/** `LOG_LEVEL`: the lowest level a service writes (default info). */
export function logLevel(env: Env): LogLevel {
  return loadConfig(
    z.object({
      LOG_LEVEL: z.enum(levels, { error: `must be one of ${levels.join(", ")}` }).default("info"),
    }),
    env,
  ).LOG_LEVEL;
}

/**
 * `REQUEST_LOG_LEVEL`: info (default) logs every request; debug keeps them out of the way of a
 * developer's terminal (`atrium start`) until LOG_LEVEL=debug asks for them.
 */
export function requestLogLevel(env: Env): RequestLogLevel {
  return loadConfig(
    z.object({
      REQUEST_LOG_LEVEL: z
        .enum(["info", "debug"], { error: "must be info or debug" })
        .default("info"),
    }),
    env,
  ).REQUEST_LOG_LEVEL;
}
