import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createCidrMatcher, parseCidrList, resolveClientIp } from "./cidr.js";

describe("cidr", () => {
  const trusted = createCidrMatcher(parseCidrList(["10.0.0.0/8", "::1"]));

  it("matches IPv4, IPv6 and IPv4-mapped peers", () => {
    const allowed = createCidrMatcher(parseCidrList(["192.168.1.0/24", "2001:db8::/32"]));
    assert.equal(allowed("192.168.1.7"), true);
    assert.equal(allowed("::ffff:192.168.1.7"), true);
    assert.equal(allowed("192.168.2.1"), false);
    assert.equal(allowed("2001:db8::5"), true);
    assert.equal(allowed("garbage"), false);
  });

  it("rejects malformed ranges", () => {
    assert.throws(() => parseCidrList(["10.0.0.0/33"]));
    assert.throws(() => parseCidrList(["example.com"]));
  });

  it("takes X-Forwarded-For only from a trusted proxy, right to left", () => {
    assert.equal(resolveClientIp("203.0.113.9", "1.2.3.4", trusted), "203.0.113.9");
    assert.equal(resolveClientIp("10.1.1.1", "1.2.3.4", trusted), "1.2.3.4");
    assert.equal(resolveClientIp("10.1.1.1", "6.6.6.6, 1.2.3.4, 10.2.2.2", trusted), "1.2.3.4");
    assert.equal(resolveClientIp("10.1.1.1", undefined, trusted), "10.1.1.1");
    assert.equal(resolveClientIp("10.1.1.1", "not-an-ip", trusted), "10.1.1.1");
  });
});
