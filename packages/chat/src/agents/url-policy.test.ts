import assert from "node:assert/strict";
import { test } from "node:test";
import { urlsIn } from "./url-policy.js";

test("a bare domain is a URL (https); code, file names and e-mail addresses are not", () => {
  assert.deepEqual(urlsIn("open example.com and tell me what it says"), ["https://example.com"]);
  assert.deepEqual(urlsIn("read www.example.org/otters, then http://a.example.net/x."), [
    "https://www.example.org/otters",
    "http://a.example.net/x",
  ]);
  assert.deepEqual(urlsIn("Run this: ```js\nconsole.log([3,1,2].sort())\n```"), []);
  assert.deepEqual(urlsIn("what does main.rs or setup.py do in node.js?"), []);
  assert.deepEqual(urlsIn("send it to bob@example.com"), []);
});
