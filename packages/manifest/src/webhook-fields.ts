/** Webhook subscription fields a manifest may set; the broker computes id and fingerprint. */
export const webhookFields = [
  "name",
  "url",
  "event_types",
  "secret",
  "enabled",
  "description",
] as const;

export type WebhookField = (typeof webhookFields)[number];

const known = new Set<string>(webhookFields);

export function isWebhookField(name: string): name is WebhookField {
  return known.has(name);
}
