import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isLoopbackAddress, isPublicAddress } from "./public-address.js";

describe("public address", () => {
  it("refuses every non-public range, IPv4-mapped forms included", () => {
    for (const ip of [
      "127.0.0.1",
      "10.1.2.3",
      "172.16.0.1",
      "172.31.255.255",
      "192.168.1.1",
      "169.254.169.254",
      "100.64.0.1",
      "0.0.0.0",
      "224.0.0.1",
      "255.255.255.255",
      "192.0.2.1",
      "198.18.0.1",
      "203.0.113.5",
      "::",
      "::1",
      "fd00::1",
      "fe80::1",
      "ff02::1",
      "2001:db8::1",
      "::ffff:10.0.0.1",
      "::ffff:a9fe:a9fe",
      "::ffff:7f00:1",
    ]) {
      assert.equal(isPublicAddress(ip), false, ip);
    }
  });

  it("accepts public addresses and refuses what is not an address", () => {
    for (const ip of ["1.1.1.1", "8.8.8.8", "172.32.0.1", "100.128.0.1", "2606:4700::1111"]) {
      assert.equal(isPublicAddress(ip), true, ip);
    }
    assert.equal(isPublicAddress("::ffff:8.8.8.8"), true);
    assert.equal(isPublicAddress("hooks.example"), false);
    assert.equal(isPublicAddress(""), false);
  });

  it("tells loopback apart from the other private ranges", () => {
    assert.equal(isLoopbackAddress("127.0.0.1"), true);
    assert.equal(isLoopbackAddress("127.9.9.9"), true);
    assert.equal(isLoopbackAddress("::1"), true);
    assert.equal(isLoopbackAddress("::ffff:127.0.0.1"), true);
    assert.equal(isLoopbackAddress("10.0.0.1"), false);
    assert.equal(isLoopbackAddress("localhost"), false);
  });
});
