import { isMap, isScalar, isSeq, type Node, parseDocument } from "yaml";

/** A sops document in key order; order matters because the MAC hashes leaves in document order. */
export type SopsTree =
  | { kind: "map"; entries: [string, SopsTree][] }
  | { kind: "list"; items: SopsTree[] }
  | { kind: "leaf"; value: string | number | boolean | null };

export type SopsFormat = "yaml" | "json" | "dotenv";

export interface SopsMetadata {
  ageStanzas: string[];
  lastModified: string;
  mac: string;
  unencryptedSuffix?: string;
  encryptedSuffix?: string;
  unencryptedRegex?: string;
  encryptedRegex?: string;
  macOnlyEncrypted: boolean;
}

export interface SopsFile {
  tree: Extract<SopsTree, { kind: "map" }>;
  metadata: SopsMetadata;
}

export function sopsFormatOf(path: string): SopsFormat {
  if (/\.ya?ml$/i.test(path)) return "yaml";
  if (/\.json$/i.test(path)) return "json";
  return "dotenv";
}

export function parseSopsFile(text: string, format: SopsFormat): SopsFile {
  const root = format === "dotenv" ? parseDotenv(text) : parseStructured(text);
  const sopsEntry = root.entries.find(([key]) => key === "sops");
  if (!sopsEntry) throw new Error("not a sops file: no sops metadata");
  const tree = { kind: "map" as const, entries: root.entries.filter(([key]) => key !== "sops") };
  return { tree, metadata: readMetadata(toPlain(sopsEntry[1])) };
}

/** Plain JavaScript for a tree, as sops would print the decrypted document. */
export function toPlain(tree: SopsTree): unknown {
  if (tree.kind === "leaf") return tree.value;
  if (tree.kind === "list") return tree.items.map(toPlain);
  return Object.fromEntries(tree.entries.map(([k, v]) => [k, toPlain(v)]));
}

function parseStructured(text: string): Extract<SopsTree, { kind: "map" }> {
  const doc = parseDocument(text);
  if (doc.errors.length > 0) throw new Error(`cannot parse: ${doc.errors[0].message}`);
  const tree = fromNode(doc.contents as Node | null);
  if (tree.kind !== "map") throw new Error("sops document root must be a mapping");
  return tree;
}

function fromNode(node: Node | null): SopsTree {
  if (isMap(node)) {
    return {
      kind: "map",
      entries: node.items.map((pair) => [
        isScalar(pair.key) ? String(pair.key.value) : String(pair.key),
        fromNode(pair.value as Node | null),
      ]),
    };
  }
  if (isSeq(node)) return { kind: "list", items: node.items.map((n) => fromNode(n as Node)) };
  if (isScalar(node)) {
    const v = node.value;
    if (typeof v === "string" || typeof v === "number" || typeof v === "boolean") {
      return { kind: "leaf", value: v };
    }
    if (typeof v === "bigint") return { kind: "leaf", value: Number(v) };
  }
  return { kind: "leaf", value: null };
}

/**
 * sops writes dotenv metadata flattened into `sops_`-prefixed keys (`__map_` and `__list_N__`
 * separators) and escapes newlines as `\n`.
 */
function parseDotenv(text: string): Extract<SopsTree, { kind: "map" }> {
  const entries: [string, SopsTree][] = [];
  const metadata: Record<string, string> = {};
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const eq = line.indexOf("=");
    if (eq <= 0) throw new Error(`invalid dotenv line: ${line.slice(0, 40)}`);
    const key = line.slice(0, eq);
    const value = line.slice(eq + 1).replaceAll("\\n", "\n");
    if (key.startsWith("sops_")) metadata[key.slice("sops_".length)] = value;
    else entries.push([key, { kind: "leaf", value }]);
  }
  entries.push(["sops", unflatten(metadata)]);
  return { kind: "map", entries };
}

function unflatten(flat: Record<string, string>): SopsTree {
  const root: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(flat)) {
    const parts = key.split(/__(?=map_|list_)/);
    let cursor: Record<string, unknown> = root;
    parts.forEach((part, i) => {
      const name = part.replace(/^map_/, "").replace(/^list_(\d+)$/, "$1");
      if (i === parts.length - 1) cursor[name] = value;
      else {
        cursor[name] ??= {};
        cursor = cursor[name] as Record<string, unknown>;
      }
    });
  }
  return toTree(root);
}

function toTree(value: unknown): SopsTree {
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length > 0 && entries.every(([k]) => /^\d+$/.test(k))) {
      const items = entries.sort(([a], [b]) => Number(a) - Number(b)).map(([, v]) => toTree(v));
      return { kind: "list", items };
    }
    return { kind: "map", entries: entries.map(([k, v]) => [k, toTree(v)]) };
  }
  return { kind: "leaf", value: value as string };
}

function readMetadata(raw: unknown): SopsMetadata {
  const meta = (raw ?? {}) as Record<string, unknown>;
  const ageList = Array.isArray(meta.age) ? meta.age : [];
  const ageStanzas = ageList
    .map((entry) => (entry as Record<string, unknown>)?.enc)
    .filter((enc): enc is string => typeof enc === "string");
  const text = (key: string) => (typeof meta[key] === "string" ? (meta[key] as string) : undefined);
  const lastModified = text("lastmodified");
  const mac = text("mac");
  if (!lastModified || !mac) throw new Error("sops metadata lacks lastmodified or mac");
  return {
    ageStanzas,
    lastModified,
    mac,
    unencryptedSuffix: text("unencrypted_suffix"),
    encryptedSuffix: text("encrypted_suffix"),
    unencryptedRegex: text("unencrypted_regex"),
    encryptedRegex: text("encrypted_regex"),
    macOnlyEncrypted: meta.mac_only_encrypted === true || meta.mac_only_encrypted === "true",
  };
}
