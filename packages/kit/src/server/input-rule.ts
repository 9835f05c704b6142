import { BinaryReader, WireType } from "@bufbuild/protobuf/wire";
import { invalidArgument } from "../errors.js";
import { defaultTransportLimits, type TransportLimits } from "./transport-limits.js";

const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Why a string cannot be stored, or undefined: PostgreSQL refuses a NUL character and a lone
 * surrogate (no UTF-8 encoding) deep inside a query, as a 500. Used for every value that reaches
 * storage: request fields here, JWT claims in auth/jwt.ts.
 */
export function unsafeStringReason(value: string): string | undefined {
  if (value.includes("\u0000")) return "must not contain a NUL character";
  if (loneSurrogate.test(value)) return "must be valid Unicode (it holds a lone surrogate)";
  return undefined;
}

/** google.protobuf.Timestamp's valid range, 0001-01-01T00:00:00Z..9999-12-31T23:59:59Z. */
const minTimestampSeconds = -62_135_596_800n;
const maxTimestampSeconds = 253_402_300_799n;
/** google.protobuf.Duration's: ±10,000 years. */
const maxDurationSeconds = 315_576_000_000n;

/** A decoded Timestamp or Duration outside what its type allows, which PostgreSQL would refuse. */
function wellKnownProblem(value: Record<string, unknown>): string | undefined {
  const typeName = value.$typeName;
  if (typeName !== "google.protobuf.Timestamp" && typeName !== "google.protobuf.Duration") {
    return undefined;
  }
  const { seconds, nanos } = value;
  // A decoded message holds a bigint; anything else is a JSON object that only looks like one.
  if (typeof seconds !== "bigint" || typeof nanos !== "number") return undefined;
  if (typeName === "google.protobuf.Timestamp") {
    if (seconds < minTimestampSeconds || seconds > maxTimestampSeconds) {
      return "must be a time from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z";
    }
    if (nanos < 0 || nanos > 999_999_999) return "must have nanos from 0 to 999999999";
    return undefined;
  }
  if (seconds < -maxDurationSeconds || seconds > maxDurationSeconds) {
    return "must be a duration of at most 10000 years";
  }
  if (
    nanos < -999_999_999 ||
    nanos > 999_999_999 ||
    (seconds > 0n && nanos < 0) ||
    (seconds < 0n && nanos > 0)
  ) {
    return "must have nanos from -999999999 to 999999999, of the same sign as seconds";
  }
  return undefined;
}

/**
 * Keys that plain JavaScript objects do not keep as data (`__proto__` sets the prototype, so the
 * value would be dropped silently), or that poison objects merged naively (`constructor` with a
 * `prototype`). Refused, naming where, rather than stored differently from what was sent.
 */
function keyProblem(key: string, item: unknown): string | undefined {
  if (key === "__proto__") return 'is "__proto__", which is not accepted as a key';
  if (key === "constructor" && typeof item === "object" && item !== null && "prototype" in item) {
    return 'is "constructor" holding "prototype", which is not accepted';
  }
  return undefined;
}

/**
 * How deep the groups of a decoded message's unknown binary fields nest (1 for a flat group).
 * Protobuf-ES keeps them as bytes, so the walk below never sees them as levels; a group is the
 * one way binary input nests without a recursive message type.
 */
function unknownGroupDepth(unknown: unknown): number {
  if (!Array.isArray(unknown)) return 0;
  let deepest = 0;
  for (const field of unknown as { wireType: WireType; data: Uint8Array }[]) {
    if (field.wireType !== WireType.StartGroup) continue;
    // The data runs from after the group's start tag to after its end tag.
    const reader = new BinaryReader(field.data);
    let depth = 1;
    deepest = Math.max(deepest, depth);
    while (reader.pos < reader.len) {
      const [, wireType] = reader.tag();
      if (wireType === WireType.StartGroup) deepest = Math.max(deepest, ++depth);
      else if (wireType === WireType.EndGroup) depth--;
      else reader.skip(wireType);
    }
  }
  return deepest;
}

const join = (path: string, key: string) => (path === "" ? key : `${path}.${key}`);

function walk(value: unknown, path: string, depth: number, maxDepth: number): string | undefined {
  if (typeof value === "string") {
    const problem = unsafeStringReason(value);
    return problem && `${path || "value"} ${problem}`;
  }
  if (typeof value !== "object" || value === null || ArrayBuffer.isView(value)) return undefined;
  if (depth > maxDepth) return `${path || "request body"} is nested more than ${maxDepth} levels`;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = walk(value[i], `${path}[${i}]`, depth + 1, maxDepth);
      if (found) return found;
    }
    return undefined;
  }
  if (value instanceof Map) {
    for (const [key, item] of value) {
      const found = walkEntry(String(key), item, path, depth, maxDepth);
      if (found) return found;
    }
    return undefined;
  }
  const wellKnown = wellKnownProblem(value as Record<string, unknown>);
  if (wellKnown) return `${path || "value"} ${wellKnown}`;
  if (depth + unknownGroupDepth((value as { $unknown?: unknown }).$unknown) > maxDepth) {
    return `${path || "request"} has unknown fields nested more than ${maxDepth} levels`;
  }
  // Own keys, `__proto__` included when JSON.parse made it one (Object.entries lists it too).
  for (const key of Object.keys(value)) {
    // Protobuf-ES messages carry their type name under `$typeName`.
    if (key.startsWith("$")) continue;
    const found = walkEntry(key, (value as Record<string, unknown>)[key], path, depth, maxDepth);
    if (found) return found;
  }
  return undefined;
}

function walkEntry(key: string, item: unknown, path: string, depth: number, maxDepth: number) {
  const problem = unsafeStringReason(key) ?? keyProblem(key, item);
  if (problem) return `a key of ${path || "the request body"} ${problem}`;
  return walk(item, join(path, key), depth + 1, maxDepth);
}

/**
 * The one input rule of every service, applied by both transports before any handler runs:
 * strings (values and keys, in bodies, path parameters and query values) hold no NUL character
 * and no lone surrogate, no key is `__proto__`, Timestamps and Durations are within their
 * types' ranges, and nesting is bounded. Throws InvalidArgument naming the field.
 */
export function checkRequestInput(
  value: unknown,
  path = "",
  nestingDepth = defaultTransportLimits.nestingDepth,
): void {
  const problem = walk(value, path, 0, nestingDepth);
  if (problem) throw invalidArgument(problem);
}

const isJsonObject = (value: unknown) =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * A REST request's path parameters, query and body under the input rule; a PATCH needs an object.
 * `paramNames` gives the field a generated route parameter stands for (the transcoder's `p0`).
 */
export function checkRestInput(
  request: { method: string; params: unknown; query: unknown; body: unknown },
  paramNames: Record<string, string> = {},
  limits: Pick<TransportLimits, "nestingDepth"> = defaultTransportLimits,
): void {
  for (const [param, value] of Object.entries(request.params ?? {})) {
    checkRequestInput(value, paramNames[param] ?? param, limits.nestingDepth);
  }
  checkRequestInput(request.query, "", limits.nestingDepth);
  if (request.method === "PATCH" && !isJsonObject(request.body)) {
    throw invalidArgument("a PATCH body must be a JSON object");
  }
  checkRequestInput(request.body, "", limits.nestingDepth);
}
