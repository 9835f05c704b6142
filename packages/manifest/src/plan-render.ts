import { type ManifestValue, NumberText } from "./manifest-value.js";
import type { FieldChange, Plan } from "./plan.js";
import type { WebhookPlan } from "./webhook-plan.js";

const masked = "(masked)";

/** Human-readable plan; masked fields never show a value on either side. */
export function renderPlan(
  plan: Plan,
  webhooks: WebhookPlan = { changes: [], orphans: [] },
): string {
  const lines: string[] = [];
  for (const change of plan.changes) {
    if (change.action === "create") {
      lines.push(`  + ${change.name} (${change.provider.definition.file}): create`);
      for (const field of change.fields)
        lines.push(`      + ${field.field}: ${shown(field, field.after)}`);
    } else if (change.action === "update") {
      lines.push(`  ~ ${change.name} (${change.provider.definition.file}): update`);
      for (const field of change.fields) lines.push(`      ${describeField(field)}`);
    } else {
      lines.push(`  - ${change.name}: delete (absent from the manifest, -prune)`);
    }
  }
  for (const name of plan.orphans) {
    lines.push(`  ? ${name}: not in the manifest (kept; -prune deletes it)`);
  }
  for (const change of webhooks.changes) {
    if (change.action === "create") {
      lines.push(`  + webhook ${change.name}: create`);
      for (const field of change.fields)
        lines.push(`      + ${field.field}: ${shown(field, field.after)}`);
    } else if (change.action === "update") {
      lines.push(`  ~ webhook ${change.name}: update`);
      for (const field of change.fields) lines.push(`      ${describeField(field)}`);
    } else {
      lines.push(`  - webhook ${change.name}: delete (absent from the manifest, -prune)`);
    }
  }
  for (const name of webhooks.orphans) {
    lines.push(`  ? webhook ${name}: not in the manifest (kept; -prune deletes it)`);
  }
  const all = [...plan.changes, ...webhooks.changes];
  const count = (action: string) => all.filter((c) => c.action === action).length;
  lines.push(
    "",
    all.length === 0
      ? "No changes. The broker matches the manifest."
      : `Plan: ${count("create")} to add, ${count("update")} to change, ${count("delete")} to delete.`,
  );
  return `${lines.join("\n")}\n`;
}

function describeField(field: FieldChange): string {
  if (field.field === "client_secret" || field.field === "secret")
    return `~ ${field.field}: (masked) -> (masked) (fingerprint differs)`;
  if (field.before === undefined) return `+ ${field.field}: ${shown(field, field.after)}`;
  if (field.after === undefined) return `- ${field.field}: ${shown(field, field.before)}`;
  return `~ ${field.field}: ${shown(field, field.before)} -> ${shown(field, field.after)}`;
}

function shown(field: FieldChange, value: ManifestValue | undefined): string {
  if (field.masked) return masked;
  if (value instanceof NumberText) return value.text;
  if (value === undefined || value === null) return '""';
  if (Array.isArray(value)) return `[${value.map((v) => shown(field, v)).join(", ")}]`;
  return JSON.stringify(value);
}
