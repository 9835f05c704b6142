import { randomUUID } from "node:crypto";
import WebSocket from "ws";
import {
  AttentionRequiredError,
  ConnectionNotActiveError,
  ConnectionRevokedError,
} from "./errors.js";
import type { GatewayClient } from "./gateway-client.js";
import type { ConnectionToken, CredentialStrategy } from "./gateway-types.js";
import { injectCredential, resolveStrategy } from "./strategies/inject-credential.js";

/**
 * A WebSocket to a provider, opened with a broker connection's credential and kept open across
 * credential rotations, with the Atrium live-socket protocol (docs/sdk.md, "Live connections"):
 *
 * - every (re)connection starts with `{"type":"hello","session":S}`; S is fixed for the socket's
 *   life, so the server can tell a reconnection from a new client;
 * - the caller's messages go out as `{"type":"message","id":N,"data":…}`, N = 1, 2, … across
 *   reconnections; the server answers `{"type":"ack","id":N}` (everything up to N arrived), and
 *   `send()` resolves only then;
 * - after a reconnection every unacknowledged message is sent again with its id, in order; the
 *   server delivers an id once (it keeps the highest id delivered per session) and acks again;
 * - the server's own messages are `{"type":"message","data":…}`, handed to `onMessage`.
 *
 * So a message whose `send()` resolved was received, and the server never delivers one twice. The
 * socket reconnects with a fresh credential before the token expires, when the server closes with
 * 4401 or 1008, or refuses the upgrade with 401 (oauth2 connections are refreshed through the
 * gateway first); after other drops it reconnects with backoff. A revoked, attention-required or
 * failed connection ends it: pending sends reject with that typed error.
 */
export interface LiveSocketOptions {
  /** `ws://` or `wss://` URL of the provider's socket. */
  url: string;
  workspaceId?: string;
  /** Overrides the strategy the gateway derived from the provider. */
  strategy?: CredentialStrategy;
  /** Reconnect with a fresh credential this long before the token expires; default 60 s. */
  refreshBeforeMs?: number;
  /** Delay before the first reconnection after a drop, doubled per failure up to `maxBackoffMs`. */
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /** Consecutive refusals of a fresh credential before giving up; default 3. */
  maxAuthFailures?: number;
  /** The server's messages, in order. */
  onMessage?: (data: unknown) => void;
  onStateChange?: (state: LiveSocketState, reason?: unknown) => void;
}

export type LiveSocketState = "connecting" | "open" | "reconnecting" | "closed";

export interface LiveSocket {
  /** Resolves when the server acknowledged the message; rejects only if the socket ends first. */
  send(data: unknown): Promise<void>;
  /** Closes for good; unacknowledged sends reject with LiveSocketClosedError. */
  close(): Promise<void>;
  readonly state: LiveSocketState;
  /** Resolves when closed by `close()`; rejects with the reason when the socket gave up. */
  readonly done: Promise<void>;
}

/** A send the socket could not confirm because it was closed or gave up first. */
export class LiveSocketClosedError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "LiveSocketClosedError";
  }
}

/** Close codes with which a server says the credential is no longer good. */
const authCloseCodes = new Set([4401, 1008]);
/** Our own close before a rotation: the server may treat it as a normal goodbye. */
const rotationCloseCode = 4000;

/** Strategies a WebSocket upgrade can carry; the signing ones sign a body an upgrade has not. */
const upgradeStrategies = new Set(["oauth2", "api_key", "basic_auth", "query_param"]);

interface Pending {
  id: number;
  frame: string;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** The connection's strategy signs requests, which an upgrade cannot carry: retrying cannot help. */
class UpgradeStrategyError extends Error {}

const isFinal = (error: unknown) =>
  error instanceof ConnectionRevokedError ||
  error instanceof AttentionRequiredError ||
  error instanceof ConnectionNotActiveError ||
  error instanceof UpgradeStrategyError;

export function openLiveSocket(
  gateway: GatewayClient,
  connectionId: string,
  options: LiveSocketOptions,
): LiveSocket {
  const scope = { workspaceId: options.workspaceId };
  const refreshBeforeMs = options.refreshBeforeMs ?? 60_000;
  const initialBackoffMs = options.initialBackoffMs ?? 250;
  const maxBackoffMs = options.maxBackoffMs ?? 10_000;
  const maxAuthFailures = options.maxAuthFailures ?? 3;
  const session = randomUUID();
  const pending: Pending[] = [];
  let nextId = 1;
  let state: LiveSocketState = "connecting";
  let socket: WebSocket | undefined;
  let rotationTimer: NodeJS.Timeout | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  let failures = 0;
  let authFailures = 0;
  /**
   * Which credential the next connection uses: the cached one, a fresh copy from the gateway (a
   * rotation before expiry), or a refreshed one (the server refused the last).
   */
  let credential: "cached" | "fresh" | "refresh" = "cached";
  let stopped = false;
  let settle: { resolve: () => void; reject: (error: unknown) => void };
  const done = new Promise<void>((resolve, reject) => {
    settle = { resolve, reject };
  });
  // A caller that only awaits sends must not see an unhandled rejection of `done`.
  done.catch(() => undefined);

  const setState = (next: LiveSocketState, reason?: unknown) => {
    state = next;
    options.onStateChange?.(next, reason);
  };

  const stop = (error?: unknown) => {
    if (stopped) return;
    stopped = true;
    clearTimeout(rotationTimer);
    clearTimeout(retryTimer);
    const reason =
      error ??
      new LiveSocketClosedError("the live socket was closed before the server acknowledged");
    for (const item of pending.splice(0)) item.reject(reason);
    socket?.close(1000);
    setState("closed", error);
    if (error) settle.reject(error);
    else settle.resolve();
  };

  /** The upgrade request as the connection's strategy wants it: headers, or a query parameter. */
  const prepareUpgrade = async (token: ConnectionToken) => {
    const strategy = resolveStrategy(token, options.strategy);
    if (!upgradeStrategies.has(strategy.type)) {
      throw new UpgradeStrategyError(
        `${strategy.type} credentials cannot be sent on a WebSocket upgrade`,
      );
    }
    const prepared = await injectCredential(
      { url: new URL(options.url), method: "GET", headers: new Headers(), body: undefined },
      token,
      strategy,
    );
    const headers: Record<string, string> = {};
    prepared.headers.forEach((value, name) => {
      headers[name] = value;
    });
    return { url: prepared.url, headers, strategy: strategy.type };
  };

  const fetchCredential = async () => {
    if (credential === "cached") return gateway.getToken(connectionId, scope);
    const token = await gateway.getToken(connectionId, { ...scope, bypassCache: true });
    // A refused access token is renewed; a static key can only be fetched again.
    if (credential === "refresh" && token.auth_type === "oauth2") {
      await gateway.refreshConnection(connectionId, scope);
      return gateway.getToken(connectionId, { ...scope, bypassCache: true });
    }
    return token;
  };

  const scheduleRotation = (token: ConnectionToken) => {
    clearTimeout(rotationTimer);
    if (!token.expires_at) return;
    const due = Date.parse(token.expires_at) - refreshBeforeMs - Date.now();
    rotationTimer = setTimeout(
      () => {
        credential = "fresh";
        socket?.close(rotationCloseCode, "credential rotation");
      },
      Math.max(0, due),
    );
    rotationTimer.unref();
  };

  const reconnectLater = (reason: unknown) => {
    if (stopped) return;
    setState("reconnecting", reason);
    const delay = Math.min(maxBackoffMs, initialBackoffMs * 2 ** failures);
    failures += 1;
    // Full jitter: many clients dropped by one server restart do not return in step.
    retryTimer = setTimeout(connect, Math.random() * delay);
    retryTimer.unref();
  };

  const onAuthRefused = (reason: unknown) => {
    authFailures += 1;
    credential = "refresh";
    if (authFailures > maxAuthFailures) {
      stop(
        new LiveSocketClosedError(
          `the server refused ${authFailures} fresh credentials of connection ${connectionId}`,
          { cause: reason },
        ),
      );
      return;
    }
    // The first refusal is a rotation (reconnect at once); repeated ones back off.
    if (authFailures === 1) {
      setState("reconnecting", reason);
      retryTimer = setTimeout(connect, 0);
      retryTimer.unref();
    } else reconnectLater(reason);
  };

  async function connect() {
    if (stopped) return;
    let upgrade: Awaited<ReturnType<typeof prepareUpgrade>>;
    let token: ConnectionToken;
    try {
      token = await fetchCredential();
      upgrade = await prepareUpgrade(token);
    } catch (error) {
      if (isFinal(error)) return stop(error);
      return reconnectLater(error);
    }
    if (stopped) return;
    const ws = new WebSocket(upgrade.url, { headers: upgrade.headers });
    socket = ws;
    let opened = false;
    // One decision per attempt: a refused upgrade is decided here, a drop in "close".
    let decided = false;
    ws.on("unexpected-response", (request, response) => {
      decided = true;
      const status = response.statusCode ?? 0;
      response.resume();
      request.destroy();
      const why = new Error(`upgrade refused: ${status}`);
      if (status === 401 || status === 403) onAuthRefused(why);
      else reconnectLater(why);
    });
    ws.on("open", () => {
      opened = true;
      failures = 0;
      credential = "cached";
      ws.send(JSON.stringify({ type: "hello", session }));
      for (const item of pending) ws.send(item.frame);
      scheduleRotation(token);
      setState("open");
    });
    ws.on("message", (raw) => {
      let frame: { type?: string; id?: number; data?: unknown };
      try {
        frame = JSON.parse(String(raw));
      } catch {
        return;
      }
      if (frame.type === "ack" && typeof frame.id === "number") {
        // A message the server confirmed means the credential was accepted.
        authFailures = 0;
        while (pending.length > 0 && pending[0].id <= frame.id) pending.shift()?.resolve();
      } else if (frame.type === "message") {
        options.onMessage?.(frame.data);
      }
    });
    ws.on("error", () => {
      // "close" follows and decides; without a listener ws would throw.
    });
    ws.on("close", (code, reason) => {
      if (socket === ws) socket = undefined;
      clearTimeout(rotationTimer);
      if (stopped || decided) return;
      decided = true;
      if (!opened) return reconnectLater(new Error("could not connect"));
      const why = new Error(`closed: ${code} ${String(reason)}`);
      if (authCloseCodes.has(code)) onAuthRefused(why);
      else if (credential === "fresh") {
        // Our own rotation: straight back with the fresh credential.
        setState("reconnecting", why);
        retryTimer = setTimeout(connect, 0);
        retryTimer.unref();
      } else reconnectLater(why);
    });
  }

  setState("connecting");
  void connect();

  return {
    send(data) {
      if (stopped) {
        return Promise.reject(new LiveSocketClosedError("the live socket is closed"));
      }
      return new Promise<void>((resolve, reject) => {
        const id = nextId++;
        const item = { id, frame: JSON.stringify({ type: "message", id, data }), resolve, reject };
        pending.push(item);
        if (socket?.readyState === WebSocket.OPEN && state === "open") socket.send(item.frame);
      });
    },
    async close() {
      stop();
      await done.catch(() => undefined);
    },
    get state() {
      return state;
    },
    done,
  };
}
