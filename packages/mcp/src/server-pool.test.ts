import assert from "node:assert/strict";
import { test } from "node:test";
import { createServerPool } from "./server-pool.js";

const limits = { timeoutMs: 1000, maxResponseBytes: 1024, maxRedirects: 0 };

test("a released server is handed to the next request with the same limits only", () => {
  const pool = createServerPool({ maxIdle: 1 });
  const first = pool.acquire({ limits });
  assert.notEqual(pool.acquire({ limits }), first, "a busy server is never handed out twice");
  pool.release({ limits }, first);
  assert.equal(pool.acquire({ limits: { ...limits, maxResponseBytes: 2048 } }) === first, false);
  assert.equal(pool.acquire({ limits }), first);
});

test("no more than maxIdle servers are kept", () => {
  const pool = createServerPool({ maxIdle: 1 });
  const [a, b] = [pool.acquire({ limits }), pool.acquire({ limits })];
  pool.release({ limits }, a);
  pool.release({ limits }, b);
  assert.equal(pool.acquire({ limits }), a);
  assert.notEqual(pool.acquire({ limits }), b);
});
