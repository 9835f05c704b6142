import { deadlineSignal } from "@atrium/sdk";
import { Readability } from "@mozilla/readability";
import { parseHTML } from "linkedom";
import type { UrlPolicy } from "./url-policy.js";

export interface ReadablePage {
  url: string;
  title: string;
  text: string;
}

export interface FetchPageOptions {
  policy: UrlPolicy;
  timeoutMs?: number;
  /** Larger bodies are cut here; a page is for reading, not for downloading. Default 2 MB. */
  maxBytes?: number;
  signal?: AbortSignal;
}

const squash = (text: string) => text.replace(/\s+/g, " ").trim();

/** Collapses spaces but keeps one line per paragraph. */
const tidy = (text: string) =>
  text
    .split("\n")
    .map(squash)
    .filter((line) => line !== "")
    .join("\n");

/** Text of an HTML fragment with a line break after each block element. */
function blockText(html: string): string {
  const marked = html.replace(
    /<\/(p|h[1-6]|li|div|section|article|tr|blockquote|pre|figure|header)>|<br\s*\/?>/gi,
    (tag) => `${tag}\n`,
  );
  return tidy(parseHTML(`<html><body>${marked}</body></html>`).document.body?.textContent ?? "");
}

/** Main text of an HTML page (Readability over linkedom), or the whole body when it finds none. */
export function extractReadable(html: string, url: string): ReadablePage {
  const { document } = parseHTML(html);
  const fallbackTitle = squash(document.title ?? "");
  const fallbackText = blockText(document.body?.innerHTML ?? "");
  // Readability mutates the document, so the fallback is read first.
  const article = new Readability(
    document as unknown as ConstructorParameters<typeof Readability>[0],
  ).parse();
  const text = article?.content ? blockText(article.content) : "";
  return {
    url,
    title: squash(article?.title ?? "") || fallbackTitle || url,
    text: text || fallbackText,
  };
}

async function readCapped(response: Response, maxBytes: number): Promise<string> {
  if (!response.body) return "";
  const decoder = new TextDecoder();
  let text = "";
  let bytes = 0;
  for await (const chunk of response.body) {
    bytes += chunk.byteLength;
    text += decoder.decode(chunk, { stream: true });
    if (bytes >= maxBytes) break;
  }
  return text;
}

/**
 * Fetches a page the policy allows and returns its readable text. Redirects are followed by hand
 * so every hop is checked against the policy.
 */
export async function fetchReadablePage(
  url: string,
  options: FetchPageOptions,
): Promise<ReadablePage> {
  const signal = deadlineSignal(options.timeoutMs ?? 15_000, options.signal);
  let current = url;
  for (let hop = 0; hop < 5; hop++) {
    if (!options.policy.allows(current)) throw new Error(`${current} is not an allowed URL`);
    const response = await fetch(current, {
      redirect: "manual",
      signal,
      headers: {
        "user-agent": "AtriumAgent/0.1 (+researcher)",
        accept: "text/html,text/plain;q=0.9,*/*;q=0.5",
      },
    });
    const location = response.headers.get("location");
    if (response.status >= 300 && response.status < 400 && location) {
      await response.body?.cancel();
      current = new URL(location, current).toString();
      continue;
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new Error(`${current} answered HTTP ${response.status}`);
    }
    const body = await readCapped(response, options.maxBytes ?? 2_000_000);
    const type = response.headers.get("content-type") ?? "";
    if (type.includes("html")) return extractReadable(body, current);
    return { url: current, title: current, text: tidy(body) };
  }
  throw new Error(`${url} redirects too often`);
}
