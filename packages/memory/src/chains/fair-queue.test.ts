import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { createFairQueue } from "./fair-queue.js";

test("keys take turns: a key's task waits behind one task of each other key, not its backlog", async () => {
  const queue = createFairQueue({ concurrency: 1 });
  const order: string[] = [];
  let release = () => {};
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const task = (name: string) => async () => {
    order.push(name);
    await gate;
  };
  const burst = Array.from({ length: 20 }, (_, i) => queue.run("tenant-a", task(`a${i}`)));
  const other = queue.run("tenant-b", task("b0"));
  assert.deepEqual(order, ["a0"]);
  assert.equal(queue.waiting(), 20);
  release();
  await Promise.all([...burst, other]);
  // a1 had its turn queued before b0 arrived; b0 takes the next one, not the 21st.
  assert.deepEqual(order.slice(0, 4), ["a0", "a1", "b0", "a2"]);
  assert.equal(order.length, 21);
});

test("never runs more tasks than its concurrency, and a failing task frees its slot", async () => {
  const queue = createFairQueue({ concurrency: 2 });
  let running = 0;
  let most = 0;
  const results = await Promise.allSettled(
    Array.from({ length: 10 }, (_, i) =>
      queue.run(`tenant-${i % 3}`, async () => {
        running++;
        most = Math.max(most, running);
        await sleep(2);
        running--;
        if (i === 4) throw new Error("task 4 failed");
        return i;
      }),
    ),
  );
  assert.equal(most, 2);
  assert.equal(results.filter((r) => r.status === "rejected").length, 1);
  assert.equal(queue.waiting(), 0);
});
