import { z } from "zod";
import { parseCidrList } from "../server/cidr.js";

/**
 * Schemas for single environment variables. Their messages complete a sentence that starts with
 * the variable name ("PORT must be …") and never repeat the value.
 */

const booleans: Record<string, boolean> = { true: true, "1": true, false: false, "0": false };

export function envBoolean() {
  return z.string().transform((value, ctx) => {
    const parsed = booleans[value.trim().toLowerCase()];
    if (parsed === undefined) {
      ctx.addIssue({ code: "custom", message: "must be true, false, 1 or 0" });
      return z.NEVER;
    }
    return parsed;
  });
}

export function envInteger(options: { min?: number; max?: number } = {}) {
  const { min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER } = options;
  return z.string().transform((value, ctx) => {
    const trimmed = value.trim();
    const parsed = Number(trimmed);
    if (!/^-?\d+$/.test(trimmed) || parsed < min || parsed > max) {
      ctx.addIssue({ code: "custom", message: `must be an integer from ${min} to ${max}` });
      return z.NEVER;
    }
    return parsed;
  });
}

/** A TCP port; 0 asks the OS for an ephemeral one. */
export function envPort() {
  return z.string().transform((value, ctx) => {
    const trimmed = value.trim();
    const parsed = Number(trimmed);
    if (!/^\d+$/.test(trimmed) || parsed > 65535) {
      ctx.addIssue({ code: "custom", message: "must be a port number from 0 to 65535" });
      return z.NEVER;
    }
    return parsed;
  });
}

/** An absolute URL, optionally limited to some schemes (given without the colon). */
export function envUrl(options: { protocols?: string[] } = {}) {
  const { protocols } = options;
  const expected = protocols ? ` with scheme ${protocols.join(", ")}` : "";
  return z.string().transform((value, ctx) => {
    let url: URL;
    try {
      url = new URL(value.trim());
    } catch {
      ctx.addIssue({ code: "custom", message: `must be an absolute URL${expected}` });
      return z.NEVER;
    }
    if (protocols && !protocols.includes(url.protocol.slice(0, -1))) {
      ctx.addIssue({ code: "custom", message: `must be a URL${expected}` });
      return z.NEVER;
    }
    return url;
  });
}

const durationUnits: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

/** Parses "250ms", "30s", "5m", "1h", "7d" into milliseconds; a bare number has no obvious unit, so it is refused. */
export function parseDuration(value: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(value.trim());
  if (!match) return undefined;
  return Math.round(Number(match[1]) * durationUnits[match[2]]);
}

/** A duration, returned in milliseconds. */
export function envDuration() {
  return z.string().transform((value, ctx) => {
    const parsed = parseDuration(value);
    if (parsed === undefined) {
      ctx.addIssue({
        code: "custom",
        message: "must be a duration such as 500ms, 30s, 5m, 1h or 7d",
      });
      return z.NEVER;
    }
    return parsed;
  });
}

/** A non-empty string; with `minLength`, a floor that suits keys and secrets. */
export function envString(options: { minLength?: number } = {}) {
  const { minLength = 1 } = options;
  return z.string().refine((value) => value.length >= minLength, {
    message: `must be at least ${minLength} characters long`,
  });
}

/** Lists are separated by commas or newlines (a key file may hold one key per line). */
export const splitEnvList = (value: string | undefined): string[] =>
  (value ?? "")
    .split(/[,\n]/)
    .map((item) => item.trim())
    .filter(Boolean);

/** A list of CIDR ranges (`10.0.0.0/8, ::1/128`). */
export function envCidrList() {
  return z.string().transform((value, ctx) => {
    try {
      return parseCidrList(splitEnvList(value));
    } catch (error) {
      ctx.addIssue({ code: "custom", message: (error as Error).message });
      return z.NEVER;
    }
  });
}
