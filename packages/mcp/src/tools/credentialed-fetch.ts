import { deadlineSignal, type FetchLike } from "@atrium/sdk";
import type { HttpRequestLimits } from "../tool-context.js";
import { McpToolError } from "../tool-result.js";

export interface CredentialedRequest {
  method: string;
  /** Absolute, or a path resolved against the provider's api_base_url. */
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
}

export interface CredentialedResponse {
  status: number;
  /** The URL the model asked for, or the last same-origin redirect target: never the signed one. */
  url: string;
  headers: Record<string, string>;
  body: string;
  truncated: boolean;
}

/** Headers a model may not set: they would redirect, smuggle or replace the injected credential. */
const refusedHeaders =
  /^(host|authorization|cookie|proxy-authorization|x-api-key|content-length|transfer-encoding|connection)$/i;

const textual = /^(text\/|application\/([\w.+-]*\+)?(json|xml|javascript|x-www-form-urlencoded))/i;

/**
 * Sends a request through a credential-injecting fetcher, only to the origin of the provider's
 * api_base_url: another host, scheme or port is refused before anything leaves, a redirect off
 * that origin is refused, and time and response size are bounded.
 */
export async function credentialedFetch(
  fetcher: FetchLike,
  apiBaseUrl: string,
  request: CredentialedRequest,
  limits: HttpRequestLimits,
  signal: AbortSignal,
): Promise<CredentialedResponse> {
  if (!apiBaseUrl) {
    throw new McpToolError(
      "Refused: this connection's provider has no api_base_url, so Atrium cannot tell which host may receive its credential.",
    );
  }
  const base = new URL(apiBaseUrl);
  let target: URL;
  try {
    target = new URL(request.url, base);
  } catch {
    throw new McpToolError(`url ${JSON.stringify(request.url)} is not a URL or path.`);
  }
  if (target.origin !== base.origin) {
    throw new McpToolError(
      `Refused: this connection's credential may only be sent to ${base.origin}, not ${target.origin}.`,
    );
  }
  for (const name of Object.keys(request.headers)) {
    if (refusedHeaders.test(name)) {
      throw new McpToolError(`Refused: header ${name} cannot be set; Atrium adds the credential.`);
    }
  }
  const bounded = deadlineSignal(limits.timeoutMs, signal);
  let method = request.method;
  let body = request.body;
  for (let redirects = 0; ; redirects++) {
    const response = await fetcher(target, {
      method,
      headers: request.headers,
      body,
      redirect: "manual",
      signal: bounded,
    });
    const location = response.headers.get("location");
    if (response.status >= 300 && response.status < 400 && location) {
      await response.body?.cancel();
      const next = new URL(location, target);
      if (next.origin !== base.origin) {
        throw new McpToolError(
          `Refused: ${target.origin} redirected to ${next.origin}; the credential is never sent off the provider's host.`,
        );
      }
      if (redirects >= limits.maxRedirects) {
        throw new McpToolError(`Refused: more than ${limits.maxRedirects} redirects.`);
      }
      if (
        response.status === 303 ||
        ((response.status === 301 || response.status === 302) && method === "POST")
      ) {
        method = "GET";
        body = undefined;
      }
      target = next;
      continue;
    }
    const { text, truncated } = await readBounded(response, limits.maxResponseBytes);
    const headers: Record<string, string> = {};
    for (const [name, value] of response.headers) {
      if (name !== "set-cookie") headers[name] = value;
    }
    return { status: response.status, url: target.toString(), headers, body: text, truncated };
  }
}

async function readBounded(
  response: Response,
  maxBytes: number,
): Promise<{ text: string; truncated: boolean }> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  const reader = response.body?.getReader();
  if (reader) {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      if (size + value.byteLength > maxBytes) {
        chunks.push(value.subarray(0, maxBytes - size));
        size = maxBytes;
        truncated = true;
        await reader.cancel();
        break;
      }
      chunks.push(value);
      size += value.byteLength;
    }
  }
  const bytes = Buffer.concat(chunks, size);
  const type = response.headers.get("content-type");
  if (type === null || textual.test(type)) {
    try {
      // Untyped bodies are text when they decode; a cut may split the last character.
      return { text: new TextDecoder("utf-8", { fatal: !truncated }).decode(bytes), truncated };
    } catch {
      // Not UTF-8: reported as binary below.
    }
  }
  return { text: `base64:${bytes.toString("base64")}`, truncated };
}
