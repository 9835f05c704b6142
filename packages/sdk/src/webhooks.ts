/** An Atrium webhook event, once its signature has been verified. */
export interface WebhookEvent {
  /** The webhook-id header: the same on every retry of this event, so use it to deduplicate. */
  id: string;
  /** connection.created, connection.attention_required, connection.revoked, ... */
  type: string;
  /** ISO 8601 time of the state change. */
  timestamp: string;
  data: Record<string, unknown>;
}

export interface VerifyWebhookOptions {
  /** How far webhook-timestamp may be from now, either way; default 300 (5 minutes). */
  toleranceSeconds?: number;
  /** Current time in milliseconds (tests). */
  now?: () => number;
}

/** Headers as fetch, Node's IncomingMessage or a plain object carry them. */
export type WebhookHeaders =
  | Headers
  | Record<string, string | string[] | undefined>
  | { get(name: string): string | null };

export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WebhookVerificationError";
  }
}

const encoder = new TextEncoder();

function header(headers: WebhookHeaders, name: string): string {
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name) ?? "";
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value.join(" ") : (value ?? "");
}

function base64Bytes(text: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text)) return undefined;
  try {
    return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  } catch {
    return undefined;
  }
}

/**
 * Verifies a Standard Webhooks request from Atrium and returns its event: the timestamp within
 * the tolerance, and one of the space-separated `v1,` signatures the HMAC-SHA256 of
 * `${webhook-id}.${webhook-timestamp}.${body}` under the subscription secret (`whsec_...`).
 * Pass the body exactly as received, before any JSON parsing. The comparison is WebCrypto's
 * HMAC verify, which takes the same time whatever the signature.
 */
export async function verifyWebhook(
  secret: string,
  headers: WebhookHeaders,
  body: string | Uint8Array,
  options: VerifyWebhookOptions = {},
): Promise<WebhookEvent> {
  const id = header(headers, "webhook-id");
  const timestamp = header(headers, "webhook-timestamp");
  const signatures = header(headers, "webhook-signature");
  if (!id || !timestamp || !signatures) {
    throw new WebhookVerificationError(
      "webhook-id, webhook-timestamp and webhook-signature are required",
    );
  }
  if (!/^\d+$/.test(timestamp)) throw new WebhookVerificationError("webhook-timestamp is invalid");
  const tolerance = options.toleranceSeconds ?? 300;
  const now = Math.floor((options.now?.() ?? Date.now()) / 1000);
  if (Math.abs(now - Number(timestamp)) > tolerance) {
    throw new WebhookVerificationError("webhook-timestamp is outside the tolerance");
  }
  const keyBytes = base64Bytes(secret.startsWith("whsec_") ? secret.slice(6) : secret);
  if (!keyBytes || keyBytes.length === 0) {
    throw new WebhookVerificationError("the secret is not whsec_ followed by base64");
  }
  const key = await crypto.subtle.importKey(
    "raw",
    keyBytes,
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["verify"],
  );
  const bytes = typeof body === "string" ? encoder.encode(body) : body;
  const prefix = encoder.encode(`${id}.${timestamp}.`);
  const signed = new Uint8Array(prefix.length + bytes.length);
  signed.set(prefix);
  signed.set(bytes, prefix.length);
  let valid = false;
  for (const entry of signatures.split(" ")) {
    const [version, encoded] = entry.split(",", 2);
    const mac = version === "v1" && encoded ? base64Bytes(encoded) : undefined;
    // Every candidate is checked, so the time taken does not tell which one matched.
    if (mac && (await crypto.subtle.verify("HMAC", key, mac, signed))) valid = true;
  }
  if (!valid) throw new WebhookVerificationError("no webhook-signature matches");
  const text = typeof body === "string" ? body : new TextDecoder().decode(body);
  let event: Omit<WebhookEvent, "id">;
  try {
    event = JSON.parse(text);
  } catch {
    throw new WebhookVerificationError("the body is not JSON");
  }
  return { id, type: event.type, timestamp: event.timestamp, data: event.data };
}
