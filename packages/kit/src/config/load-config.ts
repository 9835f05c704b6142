import type { z } from "zod";

/** A configuration problem; its message is one line naming the variable, fit for stderr. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

export type Env = Record<string, string | undefined>;

const secretName = /KEY|SECRET|TOKEN|PASSWORD|PASSPHRASE|CREDENTIAL|PRIVATE|AUTH|COOKIE|SESSION/i;

/** Whether a variable's value may be shown in an error line. */
function mayEchoValue(name: string): boolean {
  return !secretName.test(name);
}

/** URLs are echoed without their password so a DSN with credentials never reaches a log. */
function displayValue(value: string): string {
  const shown = value.length > 80 ? `${value.slice(0, 77)}...` : value;
  try {
    const url = new URL(shown);
    if (url.password) {
      url.password = "***";
      return url.toString();
    }
  } catch {
    // not a URL: shown as is
  }
  return shown;
}

function describeIssue(issue: z.core.$ZodIssue, env: Env): string {
  if (issue.path.length === 0) return issue.message;
  const name = issue.path.map(String).join(".");
  const value = typeof issue.path[0] === "string" ? env[issue.path[0]] : undefined;
  if (value === undefined) {
    return issue.code === "invalid_type" ? `${name} is required` : `${name} ${issue.message}`;
  }
  const problem = issue.code === "invalid_type" ? `must be a ${issue.expected}` : issue.message;
  const shown = mayEchoValue(name) ? ` (got "${displayValue(value)}")` : "";
  return `${name} ${problem}${shown}`;
}

/**
 * Parses the environment once against a schema. Empty strings count as unset, so `FOO=` in an
 * env file falls back to the default. Throws ConfigError naming the first bad variable.
 */
export function loadConfig<S extends z.ZodType>(schema: S, env: Env = process.env): z.output<S> {
  const present: Env = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && value !== "") present[name] = value;
  }
  const result = schema.safeParse(present);
  if (result.success) return result.data;
  const first = result.error.issues[0];
  throw new ConfigError(`invalid configuration: ${describeIssue(first, present)}`);
}
