import { isIP } from "node:net";
import { createCidrMatcher, parseCidrList } from "./cidr.js";

/**
 * Ranges a server must not be sent to on a caller's say-so (SSRF): loopback, private, shared
 * (CGNAT), link-local, unique-local, multicast, unspecified, reserved, documentation and
 * benchmarking. IPv4-mapped IPv6 forms match their IPv4 range.
 */
const NON_PUBLIC = parseCidrList([
  "0.0.0.0/8",
  "10.0.0.0/8",
  "100.64.0.0/10",
  "127.0.0.0/8",
  "169.254.0.0/16",
  "172.16.0.0/12",
  "192.0.0.0/24",
  "192.0.2.0/24",
  "192.88.99.0/24",
  "192.168.0.0/16",
  "198.18.0.0/15",
  "198.51.100.0/24",
  "203.0.113.0/24",
  "224.0.0.0/4",
  "240.0.0.0/4",
  "::/128",
  "::1/128",
  "64:ff9b:1::/48",
  "100::/64",
  "2001:2::/48",
  "2001:db8::/32",
  "3fff::/20",
  "fc00::/7",
  "fe80::/10",
  "fec0::/10",
  "ff00::/8",
]);

const LOOPBACK = parseCidrList(["127.0.0.0/8", "::1/128"]);

const nonPublic = createCidrMatcher(NON_PUBLIC);
const loopback = createCidrMatcher(LOOPBACK);

/** True for an IP address in no non-public range; false for anything that is not an IP. */
export function isPublicAddress(ip: string): boolean {
  return isIP(ip) !== 0 && !nonPublic(ip);
}

/** True for 127/8, ::1 and their IPv4-mapped forms. */
export function isLoopbackAddress(ip: string): boolean {
  return loopback(ip);
}
