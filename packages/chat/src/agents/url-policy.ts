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

/** URLs mentioned in a message, in order, without trailing punctuation. */
export function urlsIn(text: string): string[] {
  const found = text.match(/https?:\/\/[^\s<>"'`]+/g) ?? [];
  return [...new Set(found.map((u) => u.replace(/[.,;:!?)\]}]+$/, "")))];
}
