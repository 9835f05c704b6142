/**
 * Parsed manifest and broker values. Numbers keep their source text because the broker decodes
 * numbers by exact text and drift is judged on that text, never on a rounded double.
 */
export class NumberText {
  constructor(readonly text: string) {}
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
