import { isIP } from "node:net";
import { ConfigError, isLoopbackAddress } from "@atrium/kit";

export interface OpenListenerCheck {
  /** The bind address (AGENT_HOST). */
  host: string;
  /** Whether an API key, a JWT key or mTLS authenticates callers. */
  authenticated: boolean;
  /** AGENT_ALLOW_UNAUTHENTICATED: the operator accepts any caller that reaches the port. */
  allowUnauthenticated: boolean;
}

/** localhost and loopback addresses; anything else (0.0.0.0, a name, an interface) may be reached from outside. */
function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, "$1");
  return bare === "localhost" || (isIP(bare) !== 0 && isLoopbackAddress(bare));
}

/**
 * The agent host runs code from messages and spends LLM tokens for whoever reaches it, so it
 * does not start listening beyond loopback with no caller authentication unless told to, as the
 * gateway does not start when it requires keys and has none.
 */
export function refuseOpenListener(check: OpenListenerCheck): void {
  if (check.authenticated || check.allowUnauthenticated || isLoopbackHost(check.host)) return;
  throw new ConfigError(
    `invalid configuration: AGENT_HOST=${check.host} listens beyond loopback and no caller authentication is configured (set ATRIUM_AGENT_API_KEY or ATRIUM_AGENT_JWT_SECRET, listen on AGENT_HOST=127.0.0.1, or accept any caller with AGENT_ALLOW_UNAUTHENTICATED=true)`,
  );
}
