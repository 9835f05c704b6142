import assert from "node:assert/strict";
import { test } from "node:test";
import { createServerPool } from "./server-pool.js";

const limits = { timeoutMs: 1000, maxResponseBytes: 1024, maxRedirects: 0 };
const build = () => ({ built: true });

test("a released server goes back to the same caller with the same limits only", () => {
  const pool = createServerPool({ maxIdlePerCaller: 1, maxCallers: 8, build });
  const first = pool.acquire("alice", { limits });
  assert.notEqual(
    pool.acquire("alice", { limits }),
    first,
    "a busy server is never handed out twice",
  );
  pool.release("alice", { limits }, first);
  assert.notEqual(pool.acquire("bob", { limits }), first, "never to another caller");
  assert.notEqual(pool.acquire("alice", { limits: { ...limits, maxResponseBytes: 2048 } }), first);
  assert.equal(pool.acquire("alice", { limits }), first);
});

test("no more than maxIdlePerCaller servers are kept for a caller", () => {
  const pool = createServerPool({ maxIdlePerCaller: 1, maxCallers: 8, build });
  const [a, b] = [pool.acquire("alice", { limits }), pool.acquire("alice", { limits })];
  pool.release("alice", { limits }, a);
  pool.release("alice", { limits }, b);
  assert.equal(pool.acquire("alice", { limits }), a);
  assert.notEqual(pool.acquire("alice", { limits }), b);
});

test("past maxCallers, the caller idle the longest loses its servers", () => {
  const pool = createServerPool({ maxIdlePerCaller: 1, maxCallers: 2, build });
  const servers = new Map(
    ["a", "b", "c"].map((caller) => [caller, pool.acquire(caller, { limits })]),
  );
  pool.release("a", { limits }, servers.get("a") as never);
  pool.release("b", { limits }, servers.get("b") as never);
  // a is used again, so b has waited longest when c comes back.
  const again = pool.acquire("a", { limits });
  pool.release("a", { limits }, again);
  pool.release("c", { limits }, servers.get("c") as never);
  assert.equal(pool.acquire("a", { limits }), servers.get("a"));
  assert.equal(pool.acquire("c", { limits }), servers.get("c"));
  assert.notEqual(pool.acquire("b", { limits }), servers.get("b"));
});
