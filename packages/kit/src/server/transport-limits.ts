import { defaultConnectionsPerClient } from "./connection-limit.js";

/**
 * The limits every transport of a service host applies (REST, and gRPC, gRPC-Web and Connect on
 * the HTTP/2 port), declared here once so that no transport is a way around another's.
 * docs/auth.md ("Limits") lists them with each transport's answer.
 */
export interface TransportLimits {
  /** Largest request body (REST) or request message (RPC), in bytes. */
  messageBytes: number;
  /** Deepest nesting of objects and arrays in a request, known fields or not. */
  nestingDepth: number;
  /** Largest request header section: names and values of all header fields, in bytes. */
  headerBytes: number;
  /**
   * Time a client has to send a whole request (headers and body) once it started; a slower one
   * is answered 408 / DEADLINE_EXCEEDED and its connection or stream closed.
   */
  bodyReadTimeoutMs: number;
  /**
   * Connections one client address may hold open at once on each port (connection-limit.ts;
   * loopback exempt); 0 for no limit.
   */
  connectionsPerClient: number;
}

export const defaultTransportLimits: Readonly<TransportLimits> = Object.freeze({
  messageBytes: 1024 * 1024,
  nestingDepth: 64,
  // Node's own HTTP/1 default (--max-http-header-size), kept so REST answers as it always has.
  headerBytes: 16 * 1024,
  bodyReadTimeoutMs: 30_000,
  connectionsPerClient: defaultConnectionsPerClient,
});

/** The defaults with what a host overrides. */
export function transportLimits(overrides: Partial<TransportLimits> = {}): TransportLimits {
  const limits = { ...defaultTransportLimits };
  for (const [name, value] of Object.entries(overrides) as [keyof TransportLimits, number][]) {
    if (value !== undefined) limits[name] = value;
  }
  return limits;
}

/** The refusal of a header section over the limit: 431 on REST, RESOURCE_EXHAUSTED on RPC. */
export const headersTooLargeMessage = (limits: TransportLimits) =>
  `request headers are larger than ${limits.headerBytes} bytes`;

/**
 * Bytes of a header section as HTTP/2 counts it for SETTINGS_MAX_HEADER_LIST_SIZE: each field's
 * name and value plus 32 (RFC 9113 §6.5.2). Pseudo-headers count, as they do there.
 */
export function headerListBytes(headers: Record<string, string | string[] | undefined>): number {
  let bytes = 0;
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) {
      bytes += name.length + Buffer.byteLength(item) + 32;
    }
  }
  return bytes;
}
