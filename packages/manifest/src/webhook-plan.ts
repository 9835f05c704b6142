import type { LiveProvider } from "./broker-client.js";
import { secretFingerprint } from "./fingerprint.js";
import type { ManifestRecord, ManifestValue } from "./manifest-value.js";
import type { FieldChange, PlanOptions } from "./plan.js";
import type { ResolvedProvider } from "./secrets/placeholder-resolver.js";

export type WebhookChange =
  | { action: "create"; name: string; webhook: ResolvedProvider; fields: FieldChange[] }
  | {
      action: "update";
      name: string;
      id: string;
      webhook: ResolvedProvider;
      fields: FieldChange[];
      /** Only the fields that differ (PATCH). */
      body: ManifestRecord;
    }
  | { action: "delete"; name: string; id: string };

export interface WebhookPlan {
  changes: WebhookChange[];
  /** Live subscriptions absent from the manifest and left alone (no -prune). */
  orphans: string[];
}

const byName = (a: { name: string }, b: { name: string }) =>
  a.name < b.name ? -1 : a.name > b.name ? 1 : 0;

/** The broker's JSON leaves defaults out: false, "" and [] arrive as absent. */
function comparable(field: string, value: ManifestValue | undefined): string {
  if (field === "enabled") return String(value === true);
  if (field === "event_types") {
    return JSON.stringify([...new Set(Array.isArray(value) ? value.map(String) : [])].sort());
  }
  return value === undefined || value === null ? "" : String(value);
}

/** Subscriptions are matched by name, like providers; the secret drifts by fingerprint. */
export function computeWebhookPlan(
  desired: ResolvedProvider[],
  live: LiveProvider[],
  options: PlanOptions,
): WebhookPlan {
  const liveByName = new Map(live.map((w) => [w.name, w]));
  const creates: WebhookChange[] = [];
  const updates: WebhookChange[] = [];
  for (const webhook of desired) {
    const name = webhook.definition.name;
    const masked = (field: string) => field === "secret" || webhook.maskedFields.has(field);
    const current = liveByName.get(name);
    if (!current) {
      const fields = Object.entries(webhook.fields)
        .filter(([field]) => field !== "name")
        .map(([field, after]) => ({ field, after, masked: masked(field) }));
      creates.push({ action: "create", name, webhook, fields });
      continue;
    }
    const fields: FieldChange[] = [];
    const body: ManifestRecord = {};
    for (const [field, after] of Object.entries(webhook.fields)) {
      if (field === "name") continue;
      if (field === "secret") {
        const stored = current.fields.secret_fingerprint;
        if (typeof after === "string" && secretFingerprint(after) !== stored) {
          fields.push({ field, before: stored, after, masked: true });
          body.secret = after;
        }
        continue;
      }
      const before = current.fields[field];
      if (comparable(field, after) !== comparable(field, before)) {
        fields.push({ field, before, after, masked: masked(field) });
        body[field] = after ?? "";
      }
    }
    if (fields.length > 0)
      updates.push({ action: "update", name, id: current.id, webhook, fields, body });
  }
  const wanted = new Set(desired.map((w) => w.definition.name));
  const absent = live.filter((w) => !wanted.has(w.name)).sort(byName);
  return {
    changes: [
      ...creates.sort(byName),
      ...updates.sort(byName),
      ...(options.prune
        ? absent.map((w) => ({ action: "delete" as const, name: w.name, id: w.id }))
        : []),
    ],
    orphans: options.prune ? [] : absent.map((w) => w.name),
  };
}
