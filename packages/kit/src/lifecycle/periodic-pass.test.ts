import assert from "node:assert/strict";
import { test } from "node:test";
import { eventually } from "../testing/eventually.js";
import { createPeriodicPass } from "./periodic-pass.js";

test("runs pass after pass, goes on after a failure, and stop waits for the pass in progress", async () => {
  const errors: unknown[] = [];
  let passes = 0;
  let release: (() => void) | undefined;
  const pass = createPeriodicPass({
    intervalMs: 5,
    onError: (error) => errors.push(error),
    async run() {
      passes += 1;
      if (passes === 1) throw new Error("first pass fails");
      if (passes === 3) await new Promise<void>((resolve) => (release = resolve));
    },
  });
  assert.equal(pass.stopping, false, "a pass run by hand before start is not stopping");
  pass.start();
  pass.start();
  assert.equal(pass.stopping, false);
  await eventually("the third pass is running", () => release !== undefined);
  let stopped = false;
  const stopping = pass.stop().then(() => {
    stopped = true;
  });
  assert.equal(pass.stopping, true);
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(stopped, false, "stop waits for the pass in progress");
  release?.();
  await stopping;
  assert.equal(passes, 3, "no pass starts after stop");
  assert.deepEqual(
    errors.map((e) => (e as Error).message),
    ["first pass fails"],
  );
});
