import assert from "node:assert/strict";
import { test } from "node:test";
import { createCancellation } from "./cancellation.js";

test("a cancel reaches a signal taken before it", () => {
  const cancellation = createCancellation();
  const signal = cancellation.signal();
  assert.equal(signal.aborted, false);
  cancellation.cancel("stop");
  assert.equal(signal.aborted, true);
  assert.equal(signal.reason, "stop");
});

test("a signal taken after a cancel is already aborted, with the first reason", () => {
  const cancellation = createCancellation();
  cancellation.cancel("first");
  cancellation.cancel("second");
  const signal = cancellation.signal();
  assert.equal(signal.aborted, true);
  assert.equal(signal.reason, "first");
  assert.equal(cancellation.signal(), signal, "one signal per call");
});
