import { isRecord, type ManifestValue } from "./manifest-value.js";

const placeholderPattern = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;
const singlePlaceholder = /^\$\{[A-Za-z_][A-Za-z0-9_]*\}$/;

/** Placeholder names used in the string values of a parsed value; keys are never looked at. */
export function placeholderNames(value: ManifestValue | undefined): string[] {
  const names: string[] = [];
  visitStrings(value, (text) => {
    for (const match of text.matchAll(placeholderPattern)) names.push(match[1]);
  });
  return names;
}

export function isSinglePlaceholder(value: ManifestValue | undefined): boolean {
  return typeof value === "string" && singlePlaceholder.test(value);
}

/** Replaces placeholders whose value is known; unknown ones stay as written. */
export function expandPlaceholders(
  value: ManifestValue,
  lookup: (name: string) => string | undefined,
): ManifestValue {
  if (typeof value === "string") {
    return value.replace(placeholderPattern, (whole, name: string) => lookup(name) ?? whole);
  }
  if (Array.isArray(value)) return value.map((item) => expandPlaceholders(item, lookup));
  if (isRecord(value)) {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, expandPlaceholders(item, lookup)]),
    );
  }
  return value;
}

function visitStrings(value: ManifestValue | undefined, visit: (text: string) => void): void {
  if (typeof value === "string") visit(value);
  else if (Array.isArray(value)) for (const item of value) visitStrings(item, visit);
  else if (isRecord(value)) for (const item of Object.values(value)) visitStrings(item, visit);
}
