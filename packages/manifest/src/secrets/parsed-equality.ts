/**
 * Equality of values as parsed scalars, so `true`/`TRUE` and `1.50`/`1.5` are the same value: a
 * plaintext value rewritten by a round trip through a parser must still count as plaintext.
 */
export function sameParsedValue(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) || Array.isArray(b)) {
    return (
      Array.isArray(a) &&
      Array.isArray(b) &&
      a.length === b.length &&
      a.every((item, i) => sameParsedValue(item, b[i]))
    );
  }
  if (isObject(a) || isObject(b)) {
    if (!isObject(a) || !isObject(b)) return false;
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].every((key) => sameParsedValue(a[key], b[key]));
  }
  const x = scalar(a);
  const y = scalar(b);
  return x === y;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function scalar(value: unknown): unknown {
  if (typeof value !== "string") return value;
  const text = value.trim();
  if (/^(true|false)$/i.test(text)) return text.toLowerCase() === "true";
  if (/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) return Number(text);
  return value;
}
