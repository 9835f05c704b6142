import { isLoopbackAddress } from "@atrium/kit";

export interface McpOriginOptions {
  /** MCP_ALLOWED_ORIGINS: origins beside the gateway's own; "*" allows any. */
  allowedOrigins: string[];
  /** GATEWAY_PUBLIC_URL's origin: where the gateway, and the console it serves, are published. */
  publicOrigin: string | undefined;
}

/**
 * Whether a browser page may call /mcp, as the MCP transport (2025-11-25) requires servers to
 * decide to stop DNS rebinding: a page of any site whose name resolves to the gateway would
 * otherwise reach it with the user's network position. Allowed: no Origin at all (not a browser:
 * the MCP clients), the gateway's own origin (the console is served there), whether its public
 * URL or a loopback name with the port the request came in on, and the listed origins. An origin
 * equal to the request's Host is not trusted: under rebinding both name the attacker's site.
 */
export function createMcpOriginCheck(options: McpOriginOptions) {
  const anyOrigin = options.allowedOrigins.includes("*");
  const allowed = new Set(
    [...options.allowedOrigins, options.publicOrigin ?? ""]
      .filter(Boolean)
      .map((origin) => origin.replace(/\/$/, "").toLowerCase()),
  );
  return (origin: string | undefined, localPort: number | undefined): boolean => {
    if (origin === undefined || anyOrigin) return true;
    if (allowed.has(origin.toLowerCase())) return true;
    let url: URL;
    try {
      url = new URL(origin);
    } catch {
      return false;
    }
    const port = url.port || (url.protocol === "https:" ? "443" : "80");
    const host = url.hostname.replace(/^\[|\]$/g, "");
    return (
      (url.protocol === "http:" || url.protocol === "https:") &&
      (host === "localhost" || isLoopbackAddress(host)) &&
      port === String(localPort)
    );
  };
}
