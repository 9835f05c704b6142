import { LinkifyIt } from "linkify-it";

/**
 * Which URLs the researcher and browser may open. Entries are host names (`example.org`),
 * subdomain wildcards (`*.example.org`, which also matches `example.org`) or `*` for any host.
 * Only http and https are ever allowed. The default is empty: no page is opened without consent,
 * and a step that needs one yields asking for approval.
 */
export interface UrlPolicy {
  allows(url: string): boolean;
}

export function createUrlPolicy(entries: readonly string[]): UrlPolicy {
  const rules = entries.map((e) => e.trim().toLowerCase()).filter((e) => e !== "");
  return {
    allows(url) {
      let parsed: URL;
      try {
        parsed = new URL(url);
      } catch {
        return false;
      }
      if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return false;
      const host = parsed.hostname.toLowerCase();
      return rules.some((rule) => {
        if (rule === "*") return true;
        if (rule.startsWith("*.")) {
          const base = rule.slice(2);
          return host === base || host.endsWith(`.${base}`);
        }
        return host === rule;
      });
    },
  };
}

// Links as people write them in a chat: with a scheme, or a bare domain (`example.com/page`)
// whose TLD is on linkify-it's list, so `console.log` or `node.js` are not links. E-mail
// addresses, `mailto:`, `ftp:` and `//host` are not pages to open.
const linkify = new LinkifyIt({ fuzzyLink: true, fuzzyEmail: false })
  .add("ftp:", null)
  .add("mailto:", null)
  .add("//", null);

// Country TLDs that are also source-file extensions: a bare `main.rs` or `setup.py` in a
// message is a file, while `www.example.rs` or `example.rs/page` is a site.
const fileExtensions = new Set(["cc", "md", "ml", "pl", "ps", "py", "rs", "sh", "so"]);

function looksLikeFileName(raw: string): boolean {
  if (raw.includes("/") || raw.toLowerCase().startsWith("www.")) return false;
  return fileExtensions.has(raw.slice(raw.lastIndexOf(".") + 1).toLowerCase());
}

/** http(s) URLs mentioned in a message, in order, a bare domain as https, without trailing punctuation. */
export function urlsIn(text: string): string[] {
  const found = (linkify.match(text) ?? [])
    .filter((link) => link.schema !== "" || !looksLikeFileName(link.raw))
    .map((link) => (link.schema === "" ? `https://${link.raw}` : link.url));
  return [...new Set(found.map((u) => u.replace(/[.,;:!?)\]}]+$/, "")))];
}
