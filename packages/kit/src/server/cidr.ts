import { BlockList, isIP } from "node:net";

export interface Cidr {
  text: string;
  family: "ipv4" | "ipv6";
  address: string;
  prefix: number;
}

/** Parses `10.0.0.0/8`, `::1/128`, or a bare address (a single host). */
export function parseCidrList(entries: string[]): Cidr[] {
  return entries.map((text) => {
    const [address, prefixText] = text.split("/");
    const version = isIP(address);
    if (version === 0) throw new Error(`"${text}" is not an IP address or CIDR range`);
    const max = version === 4 ? 32 : 128;
    const prefix = prefixText === undefined ? max : Number(prefixText);
    if (!/^\d+$/.test(prefixText ?? String(max)) || prefix > max) {
      throw new Error(`"${text}" has an invalid prefix length`);
    }
    return { text, family: version === 4 ? "ipv4" : "ipv6", address, prefix };
  });
}

/** Membership test over CIDRs; IPv4-mapped IPv6 peers (::ffff:10.0.0.1) match IPv4 ranges. */
export function createCidrMatcher(cidrs: Cidr[]): (ip: string) => boolean {
  const list = new BlockList();
  for (const c of cidrs) list.addSubnet(c.address, c.prefix, c.family);
  return (ip) => {
    const plain = ip.startsWith("::ffff:") && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip;
    const version = isIP(plain);
    if (version === 0) return false;
    return list.check(plain, version === 4 ? "ipv4" : "ipv6");
  };
}

/**
 * The caller's address: the direct peer, unless the peer is a trusted proxy, in which case the
 * right-most X-Forwarded-For entry that is not itself a trusted proxy. Entries further left were
 * written by the client and could be anything.
 */
export function resolveClientIp(
  peer: string,
  forwardedFor: string | undefined,
  isTrustedProxy: (ip: string) => boolean,
): string {
  if (!forwardedFor || !isTrustedProxy(peer)) return peer;
  const hops = forwardedFor
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) {
    if (isIP(hops[i]) === 0) return peer;
    if (!isTrustedProxy(hops[i])) return hops[i];
  }
  return hops[0] ?? peer;
}
