import { defaultTransportLimits, invalidArgument } from "@atrium/kit";

const fieldPath = (path: string[]) =>
  path.map((part, i) => (part === "[]" || i === 0 ? part : `.${part}`)).join("");

/**
 * JSON.parse, except that numbers directly inside a top-level (or `provider.`) `params` object are
 * kept as their exact source text: `{"params":{"ratio":1.50}}` gives `"1.50"`, not 1.5. Provider
 * params are a string map, and PATCH reconciliation compares numbers by exact text. Nesting is
 * bounded as the transports bound it (this parser recurses), and a `__proto__` key is kept as
 * an ordinary key, as JSON.parse keeps it, for the input rule to refuse by name.
 */
export function parseJsonKeepingParamNumbers(text: string): unknown {
  let i = 0;
  const fail = (what: string): never => {
    throw new SyntaxError(`invalid JSON at position ${i}: ${what}`);
  };
  const ws = () => {
    while (i < text.length && " \t\n\r".includes(text[i])) i++;
  };

  function value(path: string[]): unknown {
    if (path.length > defaultTransportLimits.nestingDepth) {
      throw invalidArgument(
        `${fieldPath(path)} is nested more than ${defaultTransportLimits.nestingDepth} levels`,
      );
    }
    ws();
    const c = text[i];
    if (c === "{") return object(path);
    if (c === "[") return array(path);
    if (c === '"') return string();
    if (c === "-" || (c >= "0" && c <= "9")) return number(path);
    for (const [word, result] of [
      ["true", true],
      ["false", false],
      ["null", null],
    ] as const) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return result;
      }
    }
    return fail("unexpected character");
  }

  function object(path: string[]): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    i++;
    ws();
    if (text[i] === "}") {
      i++;
      return out;
    }
    for (;;) {
      ws();
      if (text[i] !== '"') fail("expected a key");
      const key = string();
      ws();
      if (text[i++] !== ":") fail("expected ':'");
      const item = value([...path, key]);
      // Assigned, `__proto__` would set the object's prototype and the value would be lost.
      if (key === "__proto__") {
        Object.defineProperty(out, key, { value: item, enumerable: true, writable: true });
      } else {
        out[key] = item;
      }
      ws();
      const sep = text[i++];
      if (sep === "}") return out;
      if (sep !== ",") fail("expected ',' or '}'");
    }
  }

  function array(path: string[]): unknown[] {
    const out: unknown[] = [];
    i++;
    ws();
    if (text[i] === "]") {
      i++;
      return out;
    }
    for (;;) {
      out.push(value([...path, "[]"]));
      ws();
      const sep = text[i++];
      if (sep === "]") return out;
      if (sep !== ",") fail("expected ',' or ']'");
    }
  }

  function string(): string {
    const start = i;
    i++;
    while (i < text.length && text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
    if (i >= text.length) fail("unterminated string");
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  }

  function number(path: string[]): number | string {
    const match = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (!match) return fail("invalid number");
    i += match[0].length;
    const inParams =
      (path.length === 2 && path[0] === "params") ||
      (path.length === 3 && path[0] === "provider" && path[1] === "params");
    return inParams ? match[0] : Number(match[0]);
  }

  const result = value([]);
  ws();
  if (i !== text.length) fail("trailing characters");
  return result;
}
