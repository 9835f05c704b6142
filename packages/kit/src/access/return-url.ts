/**
 * Whether a return URL holds a control character (CR, LF, tab, NUL, DEL…). The URL parser drops
 * tabs and newlines before looking at the host, so such a URL would pass the domain check while
 * the text kept and later sent as a `Location` header still carries them.
 */
export function hasControlCharacter(returnUrl: string): boolean {
  for (let i = 0; i < returnUrl.length; i++) {
    const code = returnUrl.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

/**
 * A return URL (where a browser is sent after an OAuth flow) is allowed when it is http(s), holds
 * no control character and its host equals an allowed domain or is a subdomain of one. With no
 * domains only loopback hosts are allowed, so a forgotten setting never turns a service into an
 * open redirector.
 */
export function isAllowedReturnUrl(returnUrl: string, allowedDomains: readonly string[]): boolean {
  if (hasControlCharacter(returnUrl)) return false;
  let url: URL;
  try {
    url = new URL(returnUrl);
  } catch {
    return false;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return false;
  const host = url.hostname.toLowerCase();
  if (allowedDomains.length === 0) return ["localhost", "127.0.0.1", "[::1]"].includes(host);
  return allowedDomains.some((entry) => {
    const domain = entry.toLowerCase().replace(/^\./, "");
    return host === domain || host.endsWith(`.${domain}`);
  });
}
