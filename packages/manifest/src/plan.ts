import type { LiveProvider } from "./broker-client.js";
import { secretFingerprint } from "./fingerprint.js";
import { isRecord, type ManifestRecord, type ManifestValue, NumberText } from "./manifest-value.js";
import type { ResolvedProvider } from "./secrets/placeholder-resolver.js";

export interface FieldChange {
  /** `description`, or `params.<key>` for one parameter. */
  field: string;
  before?: ManifestValue;
  after?: ManifestValue;
  /** Shown as (masked) on both sides: params, secrets and anything that held a placeholder. */
  masked: boolean;
}

export type PlannedChange =
  | { action: "create"; name: string; provider: ResolvedProvider; fields: FieldChange[] }
  | {
      action: "update";
      name: string;
      id: string;
      provider: ResolvedProvider;
      fields: FieldChange[];
      /** Only the fields that differ; params travels whole because it is one field. */
      body: ManifestRecord;
    }
  | { action: "delete"; name: string; id: string };

export interface Plan {
  changes: PlannedChange[];
  /** Live providers absent from the manifest and left alone (no -prune). */
  orphans: string[];
}

export interface PlanOptions {
  prune: boolean;
}

const byName = (a: { name: string }, b: { name: string }) =>
  a.name < b.name ? -1 : a.name > b.name ? 1 : 0;

export function computePlan(
  desired: ResolvedProvider[],
  live: LiveProvider[],
  options: PlanOptions,
): Plan {
  const liveByName = new Map(live.map((p) => [p.name, p]));
  const creates: PlannedChange[] = [];
  const updates: PlannedChange[] = [];
  for (const provider of desired) {
    const name = provider.definition.name;
    const current = liveByName.get(name);
    if (!current) {
      const fields = Object.entries(provider.fields)
        .filter(([field]) => field !== "name")
        .flatMap(([field, after]) => expandParams(field, after, provider));
      creates.push({ action: "create", name, provider, fields });
      continue;
    }
    const { fields, body } = diffProvider(provider, current);
    if (fields.length > 0) {
      updates.push({ action: "update", name, id: current.id, provider, fields, body });
    }
  }
  const wanted = new Set(desired.map((p) => p.definition.name));
  const absent = live.filter((p) => !wanted.has(p.name)).sort(byName);
  const deletes: PlannedChange[] = options.prune
    ? absent.map((p) => ({ action: "delete", name: p.name, id: p.id }))
    : [];
  return {
    changes: [...creates.sort(byName), ...updates.sort(byName), ...deletes],
    orphans: options.prune ? [] : absent.map((p) => p.name),
  };
}

function diffProvider(
  provider: ResolvedProvider,
  live: LiveProvider,
): { fields: FieldChange[]; body: ManifestRecord } {
  const fields: FieldChange[] = [];
  const body: ManifestRecord = {};
  for (const [field, after] of Object.entries(provider.fields)) {
    if (field === "name") continue;
    const before = live.fields[field];
    if (field === "client_secret") {
      // The broker never returns the secret; only its fingerprint can show drift.
      const stored = live.fields.client_secret_fingerprint;
      if (typeof stored === "string" && stored !== "" && typeof after === "string") {
        if (secretFingerprint(after) !== stored) {
          fields.push({ field, before: stored, after, masked: true });
          body[field] = after;
        }
      }
      continue;
    }
    if (field === "params") {
      const paramChanges = diffParams(after, before);
      if (paramChanges.length > 0) {
        fields.push(...paramChanges);
        body.params = isRecord(after) ? after : {};
      }
      continue;
    }
    if (!sameFieldValue(field, after, before)) {
      fields.push({ field, before, after, masked: provider.maskedFields.has(field) });
      body[field] = after ?? "";
    }
  }
  return { fields, body };
}

function diffParams(
  after: ManifestValue | undefined,
  before: ManifestValue | undefined,
): FieldChange[] {
  const desired = isRecord(after) ? after : {};
  const current = isRecord(before) ? before : {};
  const keys = [...new Set([...Object.keys(current), ...Object.keys(desired)])].sort();
  return keys
    .filter(
      (key) => !(key in desired && key in current && textOf(desired[key]) === textOf(current[key])),
    )
    .map((key) => ({
      field: `params.${key}`,
      before: current[key],
      after: desired[key],
      masked: true,
    }));
}

function expandParams(
  field: string,
  after: ManifestValue,
  provider: ResolvedProvider,
): FieldChange[] {
  if (field === "params" && isRecord(after)) {
    return Object.keys(after)
      .sort()
      .map((key) => ({ field: `params.${key}`, after: after[key], masked: true }));
  }
  const masked = field === "client_secret" || provider.maskedFields.has(field);
  return [{ field, after, masked }];
}

/**
 * Numbers compare by exact text, a missing list equals an empty one, and values the broker
 * leaves out of its JSON are its defaults (empty text, false).
 */
function sameFieldValue(
  field: string,
  after: ManifestValue,
  before: ManifestValue | undefined,
): boolean {
  if (Array.isArray(after) || Array.isArray(before)) {
    const a = Array.isArray(after) ? after : [];
    const b = Array.isArray(before) ? before : [];
    return a.length === b.length && a.every((item, i) => textOf(item) === textOf(b[i]));
  }
  const current = before === undefined && field === "enable_discovery" ? false : before;
  return textOf(after) === textOf(current);
}

function textOf(value: ManifestValue | undefined): string {
  if (value === undefined || value === null) return "";
  if (value instanceof NumberText) return value.text;
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}
