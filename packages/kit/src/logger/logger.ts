import { type DestinationStream, type Level, type Logger, pino } from "pino";
import { createRedactor } from "./redact.js";

export type { Logger };

export interface LoggerOptions {
  /** Service name, written as `name` on every line. */
  name: string;
  level?: Level | "silent";
  /** Where JSON lines go; stdout when absent. Tests pass a stream to capture them. */
  destination?: DestinationStream;
}

const secretHeaders = ["authorization", "x-api-key", "x-jwt-token", "cookie", "set-cookie"];

/** Field names that carry a credential wherever they appear in a logged object. */
export const secretFieldNames = [
  "client_secret",
  "clientSecret",
  "access_token",
  "accessToken",
  "refresh_token",
  "refreshToken",
  "id_token",
  "idToken",
  "api_key",
  "apiKey",
  "password",
  "token",
  "secret",
];

export const redactedCensor = "[redacted]";

/** Deeper than any object we log; a deeper value is censored rather than walked. */
const maxLoggedDepth = 16;

/** JSON logger whose output never carries the credentials named above. */
export function createLogger(options: LoggerOptions): Logger {
  const redact = createRedactor({
    fields: secretFieldNames,
    headers: secretHeaders,
    censor: redactedCensor,
    maxDepth: maxLoggedDepth,
  });
  const logger = pino(
    {
      name: options.name,
      level: options.level ?? "info",
      formatters: { log: (object) => redact(object) as Record<string, unknown> },
      // The redactor already gave errors their serialized form (and redacted it).
      serializers: { err: (value: unknown) => value },
    },
    options.destination,
  );
  // pino applies no formatter to a child's bindings; children inherit this from the root.
  const child = logger.child;
  logger.child = function redactedChild(this: Logger, bindings, childOptions) {
    return child.call(this, redact(bindings) as typeof bindings, childOptions);
  } as typeof child;
  return logger;
}

/**
 * Standard output written synchronously: for processes that host several services and print
 * text of their own between log lines (`atrium start`), so the lines appear in the order they
 * were written. A single service keeps pino's asynchronous default.
 */
export function synchronousStdout(): DestinationStream {
  return pino.destination({ dest: 1, sync: true });
}
