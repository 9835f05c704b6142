import type { LookupAddress } from "node:dns";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { pinnedLookup } from "./webhook-address.js";

export interface WebhookPostOptions {
  url: string;
  headers: Record<string, string>;
  body: string;
  /** The host's vetted addresses: the only ones the socket may connect to. */
  addresses: LookupAddress[];
  signal: AbortSignal;
}

/**
 * POSTs one delivery and answers the status code. Redirects are never followed (node:http does
 * not) and the answer's body is never read, so its size cannot matter.
 */
export function postWebhook(options: WebhookPostOptions): Promise<number> {
  const url = new URL(options.url);
  const request = url.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: "POST",
        headers: { ...options.headers, "content-length": Buffer.byteLength(options.body) },
        lookup: pinnedLookup(options.addresses),
        signal: options.signal,
        agent: false,
      },
      (res) => {
        resolve(res.statusCode ?? 0);
        res.destroy();
      },
    );
    req.on("error", reject);
    req.end(options.body);
  });
}
