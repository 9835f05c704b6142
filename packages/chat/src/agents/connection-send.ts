import {
  AttentionRequiredError,
  ConnectionNotActiveError,
  ConnectionRevokedError,
  type GatewayClient,
  GatewayError,
} from "@atrium/sdk";

/** A message to POST with a broker connection's credential. */
export interface ConnectionSend {
  connectionId: string;
  url: string;
  /** Scopes the connection lookup: the gateway answers 404 for another workspace's connection. */
  workspaceId?: string;
  body: Record<string, unknown>;
  signal: AbortSignal;
}

/** The target refused the credential even after the fetcher's one refresh. */
export class CredentialRefusedError extends Error {
  constructor(
    readonly connectionId: string,
    readonly status: number,
  ) {
    super(`the target refused connection ${connectionId}'s credential (HTTP ${status})`);
  }
}

/**
 * Sends through the SDK's fetcher, which asks the gateway for the token and injects it with the
 * provider's strategy, so the token never passes through this code. Returns the HTTP status.
 */
export async function sendWithConnection(
  gateway: GatewayClient,
  send: ConnectionSend,
): Promise<number> {
  const fetcher = gateway.createFetcher(send.connectionId, { workspaceId: send.workspaceId });
  const response = await fetcher(send.url, {
    method: "POST",
    headers: { "content-type": "application/json; charset=utf-8" },
    body: JSON.stringify(send.body),
    // A redirect could carry the injected credential (e.g. an API key header) to another host.
    redirect: "error",
    signal: send.signal,
  });
  const text = await response.text();
  if (response.status === 401 || response.status === 403) {
    throw new CredentialRefusedError(send.connectionId, response.status);
  }
  if (!response.ok) throw new Error(`the target answered HTTP ${response.status}`);
  // Slack-style APIs answer 200 with {"ok": false, "error": …} when nothing was sent.
  const answer = parseObject(text);
  if (answer?.ok === false) {
    throw new Error(`the target did not send the message: ${String(answer.error ?? "ok: false")}`);
  }
  return response.status;
}

/**
 * What a human has to do before this connection can send again, or undefined when the error is
 * not about the connection. These are never retried: only a reconnect can fix them.
 */
export function reconnectNeeded(error: unknown, connectionId: string): string | undefined {
  if (error instanceof AttentionRequiredError) {
    return `connection ${connectionId} needs a human to redo the consent (${error.code}): reconnect it, then repeat the request`;
  }
  if (error instanceof ConnectionRevokedError) {
    return `connection ${connectionId} was revoked: connect again and send with the new connection id`;
  }
  if (error instanceof ConnectionNotActiveError) {
    return `connection ${connectionId} is not active (${error.code}): reconnect it`;
  }
  if (error instanceof GatewayError && error.status === 404) {
    return `connection ${connectionId} does not exist (or belongs to another workspace)`;
  }
  if (error instanceof CredentialRefusedError) {
    return `${error.message}: reconnect it, then repeat the request`;
  }
  return undefined;
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
