import assert from "node:assert/strict";
import { test } from "node:test";
import { toFetchHeaders } from "./fetch-headers.js";

test("Node headers become Fetch headers: repeated values kept, numbers as text, pseudo-headers left out", () => {
  const headers = toFetchHeaders({
    ":path": "/memory.v1.MemoryService/GetContext",
    "set-cookie": ["a=1", "b=2"],
    "content-length": 12,
    "x-absent": undefined,
    "content-type": "application/json",
  });
  assert.deepEqual(headers.getSetCookie(), ["a=1", "b=2"]);
  assert.equal(headers.get("content-length"), "12");
  assert.equal(headers.get("content-type"), "application/json");
  assert.equal(headers.has("x-absent"), false);
  assert.deepEqual([...new Set(headers.keys())].sort(), [
    "content-length",
    "content-type",
    "set-cookie",
  ]);
});
