import type { OutgoingRequest } from "./outgoing-request.js";

export const defaultSignatureHeader = "X-Signature";

/** HMAC-SHA256 of the exact body bytes, hex, in a header (GitHub/Stripe-style webhooks). */
export async function signPayload(
  request: OutgoingRequest,
  secret: string,
  headerName = defaultSignatureHeader,
  prefix = "",
): Promise<OutgoingRequest> {
  const encoder = new TextEncoder();
  const key = await crypto.subtle.importKey(
    "raw",
    encoder.encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = await crypto.subtle.sign("HMAC", key, request.body ?? new Uint8Array());
  const hex = Array.from(new Uint8Array(mac), (byte) => byte.toString(16).padStart(2, "0")).join(
    "",
  );
  const headers = new Headers(request.headers);
  headers.set(headerName, `${prefix}${hex}`);
  return { ...request, headers };
}
