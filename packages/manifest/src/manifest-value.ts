/**
 * Parsed manifest and broker values. Numbers keep their source text because the broker decodes
 * numbers by exact text and drift is judged on that text, never on a rounded double.
 */
export class NumberText {
  constructor(readonly text: string) {}
  toJSON(): number {
    return Number(this.text);
  }
}

export type ManifestValue =
  | string
  | boolean
  | null
  | NumberText
  | ManifestValue[]
  | { [key: string]: ManifestValue };

export type ManifestRecord = { [key: string]: ManifestValue };

export function isRecord(value: unknown): value is ManifestRecord {
  return (
    typeof value === "object" &&
    value !== null &&
    !Array.isArray(value) &&
    !(value instanceof NumberText)
  );
}

const jsonNumber = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;

/** JSON text where numbers are written exactly as they appeared in their source. */
export function toExactJson(value: ManifestValue): string {
  if (value instanceof NumberText) {
    return jsonNumber.test(value.text) ? value.text : JSON.stringify(Number(value.text));
  }
  if (Array.isArray(value)) return `[${value.map(toExactJson).join(",")}]`;
  if (isRecord(value)) {
    const entries = Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}:${toExactJson(v)}`);
    return `{${entries.join(",")}}`;
  }
  return JSON.stringify(value);
}

/** Equality where numbers compare by exact text and a missing list equals an empty one. */
export function sameValue(a: ManifestValue | undefined, b: ManifestValue | undefined): boolean {
  const emptyish = (v: ManifestValue | undefined) =>
    v === undefined || v === null || (Array.isArray(v) && v.length === 0);
  if (Array.isArray(a) || Array.isArray(b)) {
    if (emptyish(a) && emptyish(b)) return true;
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, i) => sameValue(item, b[i]));
  }
  if (a instanceof NumberText || b instanceof NumberText) {
    return a instanceof NumberText && b instanceof NumberText && a.text === b.text;
  }
  if (isRecord(a) || isRecord(b)) {
    if (!isRecord(a) || !isRecord(b)) return false;
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const key of keys) if (!sameValue(a[key], b[key])) return false;
    return true;
  }
  return (a ?? null) === (b ?? null);
}
