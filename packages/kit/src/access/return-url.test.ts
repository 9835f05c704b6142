import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { hasControlCharacter, isAllowedReturnUrl } from "./return-url.js";

describe("isAllowedReturnUrl", () => {
  it("allows listed domains and their subdomains, case-insensitively", () => {
    assert.equal(isAllowedReturnUrl("https://example.com/x", ["example.com"]), true);
    assert.equal(isAllowedReturnUrl("https://App.Example.com/x", ["EXAMPLE.com"]), true);
    assert.equal(isAllowedReturnUrl("http://app.example.com/x", [".example.com"]), true);
  });

  it("refuses look-alike hosts, other schemes and unparsable URLs", () => {
    assert.equal(isAllowedReturnUrl("https://evil-example.com/x", ["example.com"]), false);
    assert.equal(isAllowedReturnUrl("https://example.com.evil.io/x", ["example.com"]), false);
    assert.equal(isAllowedReturnUrl("javascript:alert(1)", ["example.com"]), false);
    assert.equal(isAllowedReturnUrl("not a url", ["example.com"]), false);
  });

  it("allows only loopback when no domain is configured", () => {
    assert.equal(isAllowedReturnUrl("http://localhost:3000/x", []), true);
    assert.equal(isAllowedReturnUrl("http://127.0.0.1/x", []), true);
    assert.equal(isAllowedReturnUrl("http://[::1]:8080/x", []), true);
    assert.equal(isAllowedReturnUrl("https://app.example.com/x", []), false);
  });
});

describe("hasControlCharacter", () => {
  it("finds CR, LF, tab, NUL and DEL, which the URL parser would silently drop", () => {
    for (const url of [
      "http://127.0.0.1/x\r\nSet-Cookie: a=b",
      "http://localhost/\t",
      "http://localhost/\u0000",
      "http://localhost/\u007f",
    ]) {
      assert.equal(hasControlCharacter(url), true, JSON.stringify(url));
      assert.equal(isAllowedReturnUrl(url, []), false, JSON.stringify(url));
    }
    assert.equal(hasControlCharacter("https://example.com/a?b=c%0d%0a"), false);
  });
});
