import { type DestinationStream, type Level, type Logger, pino } from "pino";

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

/**
 * pino's redaction has no "any depth" wildcard, so each name is listed at the top level and
 * under up to this many levels of nesting (request bodies and error causes sit at 2–3).
 */
const redactionDepth = 4;

export function redactionPaths(): string[] {
  const paths = secretHeaders.flatMap((h) => [`req.headers["${h}"]`, `res.headers["${h}"]`]);
  for (const field of secretFieldNames) {
    for (let depth = 0; depth <= redactionDepth; depth++) {
      paths.push([...Array(depth).fill("*"), field].join("."));
    }
  }
  return paths;
}

export const redactedCensor = "[redacted]";

/** JSON logger whose output never carries the credentials named above. */
export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      name: options.name,
      level: options.level ?? "info",
      redact: { paths: redactionPaths(), censor: redactedCensor },
    },
    options.destination,
  );
}

/**
 * Standard output written synchronously: for processes that host several services and print
 * text of their own between log lines (`atrium start`), so the lines appear in the order they
 * were written. A single service keeps pino's asynchronous default.
 */
export function synchronousStdout(): DestinationStream {
  return pino.destination({ dest: 1, sync: true });
}
