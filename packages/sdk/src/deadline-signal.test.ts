import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { setImmediate } from "node:timers/promises";
import v8 from "node:v8";
import { runInNewContext } from "node:vm";
import { deadlineSignal } from "./deadline-signal.js";

v8.setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

test("the deadline ends a request that never answers, also after a garbage collection", async (t) => {
  const server = createServer(() => {});
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const request = fetch(url, { signal: deadlineSignal(300, new AbortController().signal) });
  await setImmediate();
  gc();
  await assert.rejects(request, { name: "TimeoutError" });
});

test("another signal still aborts before the deadline", async () => {
  const stop = new AbortController();
  const signal = deadlineSignal(60_000, stop.signal);
  stop.abort(new Error("stopping"));
  assert.equal(signal.aborted, true);
  assert.equal((signal.reason as Error).message, "stopping");
});
