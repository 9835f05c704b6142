import { invalidArgument } from "../errors.js";

/** Deeper request values are refused: no handler needs them, and walking them costs stack. */
const maxDepth = 64;

const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function stringProblem(value: string): string | undefined {
  if (value.includes("\u0000")) return "must not contain a NUL character";
  if (loneSurrogate.test(value)) return "must be valid Unicode (it holds a lone surrogate)";
  return undefined;
}

const join = (path: string, key: string) => (path === "" ? key : `${path}.${key}`);

function walk(value: unknown, path: string, depth: number): string | undefined {
  if (typeof value === "string") {
    const problem = stringProblem(value);
    return problem && `${path || "value"} ${problem}`;
  }
  if (typeof value !== "object" || value === null || ArrayBuffer.isView(value)) return undefined;
  if (depth > maxDepth) return `${path || "request body"} is nested more than ${maxDepth} levels`;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = walk(value[i], `${path}[${i}]`, depth + 1);
      if (found) return found;
    }
    return undefined;
  }
  const entries = value instanceof Map ? value.entries() : Object.entries(value);
  for (const [key, item] of entries) {
    // Protobuf-ES messages carry their type name under `$typeName`.
    if (typeof key === "string" && key.startsWith("$")) continue;
    const keyProblem = typeof key === "string" ? stringProblem(key) : undefined;
    if (keyProblem) return `a key of ${path || "the request body"} ${keyProblem}`;
    const found = walk(item, join(path, String(key)), depth + 1);
    if (found) return found;
  }
  return undefined;
}

/**
 * The one input rule of every service, applied by both transports before any handler runs:
 * strings (values and keys, in bodies, path parameters and query values) hold no NUL character
 * and no lone surrogate, which PostgreSQL would refuse deep inside a query, and nesting is
 * bounded. Throws InvalidArgument naming the field.
 */
export function checkRequestInput(value: unknown, path = ""): void {
  const problem = walk(value, path, 0);
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
): void {
  for (const [param, value] of Object.entries(request.params ?? {})) {
    checkRequestInput(value, paramNames[param] ?? param);
  }
  checkRequestInput(request.query);
  if (request.method === "PATCH" && !isJsonObject(request.body)) {
    throw invalidArgument("a PATCH body must be a JSON object");
  }
  checkRequestInput(request.body);
}
