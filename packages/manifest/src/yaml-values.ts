import { isMap, isScalar, isSeq, type Node, parseDocument } from "yaml";
import { type ManifestRecord, type ManifestValue, NumberText } from "./manifest-value.js";

/** Converts a composed YAML node, keeping each number's source text. */
export function nodeToValue(node: Node | null | undefined, source: string): ManifestValue {
  if (node == null) return null;
  if (isMap(node)) {
    const out: ManifestRecord = {};
    for (const pair of node.items) {
      const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
      out[key] = nodeToValue(pair.value as Node | null, source);
    }
    return out;
  }
  if (isSeq(node)) return node.items.map((item) => nodeToValue(item as Node, source));
  if (isScalar(node)) {
    const value = node.value;
    if (typeof value === "number" || typeof value === "bigint") {
      const text = node.range ? source.slice(node.range[0], node.range[1]).trim() : String(value);
      return new NumberText(text);
    }
    if (typeof value === "string" || typeof value === "boolean" || value === null) return value;
    return String(value);
  }
  return null;
}

/** Parses JSON (a YAML subset) so numbers compare by the text the broker sent. */
export function parseExactJson(text: string): ManifestValue {
  const doc = parseDocument(text, { schema: "core" });
  if (doc.errors.length > 0) throw new Error(`invalid JSON: ${doc.errors[0].message}`);
  return nodeToValue(doc.contents as Node | null, text);
}
