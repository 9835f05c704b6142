import { readdir, readFile, stat } from "node:fs/promises";
import { basename, join } from "node:path";
import { isProviderField } from "@atrium/broker/rules";
import {
  isMap,
  isScalar,
  isSeq,
  LineCounter,
  type Node,
  parseAllDocuments,
  type YAMLMap,
} from "yaml";
import type { ManifestProblem } from "./manifest-problem.js";
import type { ManifestRecord } from "./manifest-value.js";
import { isWebhookField } from "./webhook-fields.js";
import { nodeToValue } from "./yaml-values.js";

/** A provider or webhook definition as written, with the lines its fields came from. */
export interface ManifestDefinition {
  name: string;
  file: string;
  line: number;
  fields: ManifestRecord;
  fieldLines: Record<string, number>;
}

export type ManifestProvider = ManifestDefinition;
export type ManifestWebhook = ManifestDefinition;

export interface LoadedManifest {
  providers: ManifestProvider[];
  /** Only a single-file manifest has them (root key `webhooks`). */
  webhooks: ManifestWebhook[];
  /** The manifest has a `webhooks` section (possibly empty): subscriptions are managed. */
  declaresWebhooks: boolean;
  problems: ManifestProblem[];
}

const kinds = {
  provider: isProviderField,
  webhook: isWebhookField,
} as const;
type DefinitionKind = keyof typeof kinds;

const providerFileSuffix = ".yaml";

/** Loads a manifest file, or a directory of `<name>.yaml` files in file-name order. */
export async function loadManifest(path: string): Promise<LoadedManifest> {
  const info = await stat(path).catch(() => null);
  if (!info) {
    return {
      providers: [],
      webhooks: [],
      declaresWebhooks: false,
      problems: [{ file: path, message: "no such file or directory" }],
    };
  }
  if (!info.isDirectory()) return parseManifestFile(path, await readFile(path, "utf8"));

  const entries = (await readdir(path)).filter((name) => !name.startsWith("."));
  const names = entries
    .filter((name) => name.endsWith(providerFileSuffix))
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const result: LoadedManifest = {
    providers: [],
    webhooks: [],
    declaresWebhooks: false,
    problems: [],
  };
  // A provider file that is silently skipped would look absent, and -prune would delete it.
  for (const name of entries.filter((n) => n.endsWith(".yml"))) {
    result.problems.push({
      file: join(path, name),
      message: `provider files are named <name>${providerFileSuffix}`,
    });
  }
  if (names.length === 0) {
    result.problems.push({ file: path, message: `no ${providerFileSuffix} files in directory` });
  }
  for (const name of names) {
    const file = join(path, name);
    const loaded = parseProviderFile(file, await readFile(file, "utf8"));
    result.problems.push(...loaded.problems);
    for (const provider of loaded.providers) {
      const expected = basename(name, providerFileSuffix);
      if (provider.name !== expected) {
        result.problems.push({
          file,
          line: provider.line,
          message: `file name "${name}" does not match provider name "${provider.name}"`,
        });
      }
      result.providers.push(provider);
    }
  }
  result.problems.push(...duplicateProblems("provider", result.providers));
  return result;
}

/** A single manifest whose root keys are `providers` and `webhooks` (at least one of them). */
export function parseManifestFile(file: string, source: string): LoadedManifest {
  const problems: ManifestProblem[] = [];
  const empty = { providers: [], webhooks: [], declaresWebhooks: false, problems };
  const root = parseSingleDocument(file, source, problems);
  if (!root) return empty;
  const { node, lines } = root;
  if (!isMap(node)) {
    problems.push({ file, line: lines.lineOf(node), message: "manifest root must be a mapping" });
    return empty;
  }
  const sections: Partial<Record<"providers" | "webhooks", Node | null>> = {};
  for (const pair of node.items) {
    const key = keyName(pair.key);
    if (key === "providers" || key === "webhooks") {
      sections[key] = pair.value as Node | null;
    } else {
      problems.push({ file, line: lines.lineOf(pair.key), message: `unknown root key "${key}"` });
    }
  }
  if (!("providers" in sections) && !("webhooks" in sections)) {
    problems.push({
      file,
      line: lines.lineOf(node),
      message: 'manifest root has no "providers" or "webhooks" key',
    });
    return empty;
  }
  const read = (key: "providers" | "webhooks", kind: DefinitionKind): ManifestDefinition[] => {
    if (!(key in sections)) return [];
    const section = sections[key];
    if (!isSeq(section)) {
      problems.push({
        file,
        line: lines.lineOf(section ?? node),
        message: `"${key}" must be a list`,
      });
      return [];
    }
    const definitions: ManifestDefinition[] = [];
    for (const item of section.items) {
      const definition = readDefinition(kind, file, item as Node, source, lines, problems);
      if (definition) definitions.push(definition);
    }
    problems.push(...duplicateProblems(kind, definitions));
    return definitions;
  };
  const providers = read("providers", "provider");
  const webhooks = read("webhooks", "webhook");
  return { providers, webhooks, declaresWebhooks: "webhooks" in sections, problems };
}

/** One file of a directory manifest: a single provider mapping. */
export function parseProviderFile(file: string, source: string): LoadedManifest {
  const problems: ManifestProblem[] = [];
  const root = parseSingleDocument(file, source, problems);
  if (!root) return { providers: [], webhooks: [], declaresWebhooks: false, problems };
  const provider = readDefinition("provider", file, root.node, source, root.lines, problems);
  return { providers: provider ? [provider] : [], webhooks: [], declaresWebhooks: false, problems };
}

interface LineLookup {
  lineOf(node: unknown): number;
}

function parseSingleDocument(
  file: string,
  source: string,
  problems: ManifestProblem[],
): { node: Node; lines: LineLookup } | null {
  const counter = new LineCounter();
  const lines: LineLookup = {
    lineOf(node) {
      const range = (node as { range?: [number, number, number] } | null)?.range;
      return range ? counter.linePos(range[0]).line : 1;
    },
  };
  const docs = parseAllDocuments(source, { lineCounter: counter, uniqueKeys: true });
  if (docs.length === 0) {
    problems.push({ file, line: 1, message: "file is empty" });
    return null;
  }
  if (docs.length > 1) {
    const second = docs[1];
    const line = second.range ? counter.linePos(second.range[0]).line : 1;
    problems.push({ file, line, message: `expected one YAML document, found ${docs.length}` });
    return null;
  }
  const doc = docs[0];
  if (doc.errors.length > 0) {
    for (const error of doc.errors) {
      problems.push({
        file,
        line: counter.linePos(error.pos[0]).line,
        message: error.message.split("\n")[0],
      });
    }
    return null;
  }
  if (doc.contents == null) {
    problems.push({ file, line: 1, message: "file is empty" });
    return null;
  }
  return { node: doc.contents as Node, lines };
}

function readDefinition(
  kind: DefinitionKind,
  file: string,
  node: Node,
  source: string,
  lines: LineLookup,
  problems: ManifestProblem[],
): ManifestDefinition | null {
  const line = lines.lineOf(node);
  if (!isMap(node)) {
    problems.push({ file, line, message: `${kind} definition must be a mapping` });
    return null;
  }
  const fields: ManifestRecord = {};
  const fieldLines: Record<string, number> = {};
  for (const pair of (node as YAMLMap).items) {
    const key = keyName(pair.key);
    const keyLine = lines.lineOf(pair.key);
    if (!kinds[kind](key)) {
      problems.push({ file, line: keyLine, message: `unknown ${kind} field "${key}"` });
      continue;
    }
    fields[key] = nodeToValue(pair.value as Node | null, source);
    fieldLines[key] = keyLine;
  }
  const name = fields.name;
  if (typeof name !== "string" || name === "") {
    problems.push({ file, line, message: `${kind} has no "name"` });
    return null;
  }
  return { name, file, line, fields, fieldLines };
}

function keyName(key: unknown): string {
  return isScalar(key) ? String(key.value) : String(key);
}

function duplicateProblems(
  kind: DefinitionKind,
  definitions: ManifestDefinition[],
): ManifestProblem[] {
  const first = new Map<string, ManifestDefinition>();
  const problems: ManifestProblem[] = [];
  for (const definition of definitions) {
    const earlier = first.get(definition.name);
    if (earlier) {
      problems.push({
        file: definition.file,
        line: definition.line,
        message: `duplicate ${kind} name "${definition.name}" (first defined at ${earlier.file}:${earlier.line})`,
      });
    } else {
      first.set(definition.name, definition);
    }
  }
  return problems;
}
