/** A return URL is allowed when it is http(s) and its host is a listed domain or under one. */
export function isAllowedReturnUrl(returnUrl: string, allowedDomains: readonly string[]): boolean {
  let url: URL;
  try {
    url = new URL(returnUrl);
  } catch {
    return false;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return false;
  const host = url.hostname.toLowerCase();
  return allowedDomains.some((domain) => host === domain || host.endsWith(`.${domain}`));
}
