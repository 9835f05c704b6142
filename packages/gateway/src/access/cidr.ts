import { BlockList, isIP } from "node:net";

export interface Cidr {
  text: string;
  family: "ipv4" | "ipv6";
  address: string;
  prefix: number;
}

/** Parses `10.0.0.0/8`, `::1/128`, or a bare address (one host). */
export function parseCidrList(entries: string[]): Cidr[] {
  return entries.map((text) => {
    const [address, prefixText] = text.split("/");
    const version = isIP(address);
    if (version === 0) throw new Error(`"${text}" is not an IP address or CIDR range`);
    const max = version === 4 ? 32 : 128;
    if (prefixText !== undefined && (!/^\d+$/.test(prefixText) || Number(prefixText) > max)) {
      throw new Error(`"${text}" has an invalid prefix length`);
    }
    const prefix = prefixText === undefined ? max : Number(prefixText);
    return { text, family: version === 4 ? "ipv4" : "ipv6", address, prefix };
  });
}

/** Membership over CIDRs; IPv4-mapped IPv6 peers (::ffff:10.0.0.1) match IPv4 ranges. */
export function createCidrMatcher(cidrs: Cidr[]): (ip: string) => boolean {
  const list = new BlockList();
  for (const cidr of cidrs) list.addSubnet(cidr.address, cidr.prefix, cidr.family);
  return (ip) => {
    const plain = ip.startsWith("::ffff:") && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip;
    const version = isIP(plain);
    return version !== 0 && list.check(plain, version === 4 ? "ipv4" : "ipv6");
  };
}

/**
 * The caller's address: the direct peer, unless that peer is a trusted proxy; then the right-most
 * X-Forwarded-For hop that is not itself a trusted proxy. Hops further left were written by the
 * client and prove nothing.
 */
export function resolveClientIp(
  peer: string,
  forwardedFor: string | undefined,
  isTrustedProxy: (ip: string) => boolean,
): string {
  if (!forwardedFor || !isTrustedProxy(peer)) return peer;
  const hops = forwardedFor
    .split(",")
    .map((hop) => hop.trim())
    .filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) {
    if (isIP(hops[i]) === 0) return peer;
    if (!isTrustedProxy(hops[i])) return hops[i];
  }
  return hops[0] ?? peer;
}
