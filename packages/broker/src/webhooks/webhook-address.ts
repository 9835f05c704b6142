import type { LookupAddress } from "node:dns";
import { lookup } from "node:dns/promises";
import { isIP, type LookupFunction } from "node:net";
import { isLoopbackAddress, isPublicAddress } from "@atrium/kit";

/** Every address a host name resolves to, as `dns.lookup` with `all: true` gives them. */
export type ResolveHost = (hostname: string) => Promise<LookupAddress[]>;

export interface WebhookAddressOptions {
  /** Loopback addresses pass (WEBHOOK_ALLOW_HTTP_LOOPBACK, development and tests only). */
  allowLoopback: boolean;
  /** The system resolver unless a test stands in. */
  resolve?: ResolveHost;
}

/** A delivery refused because of where its host points; the text names no address. */
export class WebhookAddressError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WebhookAddressError";
  }
}

const systemResolve: ResolveHost = (hostname) => lookup(hostname, { all: true, verbatim: true });

/**
 * Resolves a delivery host once and vets every address: one non-public answer refuses the host,
 * since a name served with a mix would otherwise let a retry land on the internal one.
 */
export function createAddressVetter(
  options: WebhookAddressOptions,
): (hostname: string) => Promise<LookupAddress[]> {
  const resolve = options.resolve ?? systemResolve;
  const allowed = (ip: string) =>
    isPublicAddress(ip) || (options.allowLoopback && isLoopbackAddress(ip));
  return async (hostname) => {
    const host = hostname.replace(/^\[|\]$/g, "");
    const version = isIP(host);
    const addresses = version === 0 ? await resolve(host) : [{ address: host, family: version }];
    if (addresses.length === 0) throw new WebhookAddressError("host resolved to no address");
    if (!addresses.every((entry) => allowed(entry.address))) {
      throw new WebhookAddressError("host resolves to a non-public address; not sent");
    }
    return addresses;
  };
}

/**
 * A socket `lookup` that answers with addresses vetted before: the connection goes to what was
 * checked, with no second resolution a rebinding DNS server could answer differently.
 */
export function pinnedLookup(addresses: LookupAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    const family = options.family === 4 || options.family === 6 ? options.family : 0;
    const usable = addresses.filter((entry) => family === 0 || entry.family === family);
    if (usable.length === 0) {
      const error = Object.assign(new Error("no vetted address of the requested family"), {
        code: "ENOTFOUND",
      });
      callback(error, "", 0);
      return;
    }
    if (options.all) {
      (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, usable);
      return;
    }
    callback(null, usable[0].address, usable[0].family);
  };
}
