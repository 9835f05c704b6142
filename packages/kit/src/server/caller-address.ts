import { createContextKey } from "@connectrpc/connect";
import { ipNotAllowed } from "../fixed-errors.js";
import { type Cidr, createCidrMatcher, resolveClientIp } from "./cidr.js";

/**
 * The caller's IP address as the host resolved it (peer, or X-Forwarded-For through a trusted
 * proxy), on both transports. Handlers read it instead of any header, which a caller could set.
 */
export const callerAddressKey = createContextKey("", {
  description: "caller IP address resolved through the trusted proxies",
});

/**
 * For a call made on others' behalf (a batch carrying each original call's X-Forwarded-For):
 * the address one of those calls resolves to, by the same trusted-proxy rule and the same
 * allowlist as this call's own address. Set on gRPC calls.
 */
export type ForwardedCallerResolver = (forwardedFor: string) => string;

export const forwardedCallerKey = createContextKey<ForwardedCallerResolver | undefined>(undefined, {
  description: "resolves a forwarded caller address through the trusted proxies",
});

export interface CallerAddressOptions {
  /** Callers outside these ranges are refused before authentication; empty: everyone passes. */
  allowedCidrs?: Cidr[];
  /** Reverse proxies whose X-Forwarded-For is believed; empty: the peer is the caller. */
  trustedProxies?: Cidr[];
}

export interface CallerAddressPolicy {
  resolve(peer: string | undefined, forwardedFor: string | string[] | undefined): string;
  /** Throws the refusal (ipNotAllowed: REST 403, gRPC PERMISSION_DENIED) for other callers. */
  check(address: string): void;
}

export function createCallerAddressPolicy(options: CallerAddressOptions = {}): CallerAddressPolicy {
  const isTrustedProxy = createCidrMatcher(options.trustedProxies ?? []);
  const allowed = options.allowedCidrs?.length
    ? createCidrMatcher(options.allowedCidrs)
    : undefined;
  return {
    resolve(peer, forwardedFor) {
      const hops = Array.isArray(forwardedFor) ? forwardedFor.join(",") : forwardedFor;
      return resolveClientIp(peer ?? "", hops, isTrustedProxy);
    },
    check(address) {
      if (allowed && !allowed(address)) {
        throw ipNotAllowed({});
      }
    },
  };
}
