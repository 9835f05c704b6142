import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { createGroupCommit } from "./group-commit.js";

/** A write that records its batches and answers each item with its double. */
function recordingWrite(fail: (items: number[]) => boolean = () => false) {
  const batches: number[][] = [];
  let release: (() => void) | undefined;
  let hold = false;
  return {
    batches,
    holdNext() {
      hold = true;
    },
    release: () => release?.(),
    async write(items: number[]) {
      batches.push(items);
      if (hold) {
        hold = false;
        await new Promise<void>((resolve) => {
          release = resolve;
        });
      }
      if (fail(items)) throw new Error(`rejected ${items.join(",")}`);
      return items.map((x) => x * 2);
    },
  };
}

describe("group commit", () => {
  test("requests made together are written by one call, each getting its own results", async () => {
    const store = recordingWrite();
    const group = createGroupCommit(store.write);
    const results = await Promise.all([group.write([1, 2]), group.write([3]), group.write([4, 5])]);
    assert.deepEqual(results, [[2, 4], [6], [8, 10]]);
    assert.deepEqual(store.batches, [[1, 2, 3, 4, 5]]);
  });

  test("requests made while a write is in flight go together in the next one", async () => {
    const store = recordingWrite();
    const group = createGroupCommit(store.write);
    store.holdNext();
    const first = group.write([1]);
    await new Promise((resolve) => setImmediate(resolve));
    const later = [group.write([2]), group.write([3])];
    store.release();
    assert.deepEqual(await first, [2]);
    assert.deepEqual(await Promise.all(later), [[4], [6]]);
    assert.deepEqual(store.batches, [[1], [2, 3]]);
  });

  test("a failing batch is retried request by request, so only the bad one fails", async () => {
    const store = recordingWrite((items) => items.includes(13));
    const group = createGroupCommit(store.write);
    const results = await Promise.allSettled([
      group.write([1]),
      group.write([13, 14]),
      group.write([2]),
    ]);
    assert.deepEqual(results[0], { status: "fulfilled", value: [2] });
    assert.equal(results[1].status, "rejected");
    assert.match(String((results[1] as PromiseRejectedResult).reason), /rejected 13,14/);
    assert.deepEqual(results[2], { status: "fulfilled", value: [4] });
    assert.deepEqual(store.batches, [[1, 13, 14, 2], [1], [13, 14], [2]]);
  });

  test("a batch carries at most maxRequests requests", async () => {
    const store = recordingWrite();
    const group = createGroupCommit(store.write, { maxRequests: 2 });
    await Promise.all([1, 2, 3, 4, 5].map((x) => group.write([x])));
    assert.deepEqual(store.batches, [[1, 2], [3, 4], [5]]);
  });

  test("with minIntervalMs, writes start that far apart and carry what arrived meanwhile", async () => {
    const store = recordingWrite();
    const starts: number[] = [];
    const group = createGroupCommit(
      (items: number[]) => {
        starts.push(performance.now());
        return store.write(items);
      },
      // Long against the 30 ms the later requests take to arrive, so a loaded machine that
      // runs the sleeps late still sees them all arrive within the interval.
      { minIntervalMs: 1000 },
    );
    const written = [group.write([1])];
    for (const x of [2, 3, 4]) {
      await sleep(10);
      written.push(group.write([x]));
    }
    assert.deepEqual(await Promise.all(written), [[2], [4], [6], [8]]);
    assert.deepEqual(store.batches, [[1], [2, 3, 4]]);
    assert.ok(
      starts[1] - starts[0] >= 999,
      `second write ${starts[1] - starts[0]} ms after the first`,
    );
  });

  test("with minIntervalMs, a write after an idle spell or with a full batch starts at once", async () => {
    const store = recordingWrite();
    // Waiting would take about 1 s; not waiting takes a few ms, so 500 ms holds on a loaded machine.
    const group = createGroupCommit(store.write, { minIntervalMs: 1000, maxRequests: 2 });
    await group.write([1]);
    await sleep(1050);
    let started = performance.now();
    await group.write([2]);
    assert.ok(performance.now() - started < 500, "an idle writer does not wait");
    started = performance.now();
    await Promise.all([group.write([3]), group.write([4])]);
    assert.ok(performance.now() - started < 500, "a full batch does not wait");
    assert.deepEqual(store.batches, [[1], [2], [3, 4]]);
  });

  test("keeps working after a failure", async () => {
    const store = recordingWrite((items) => items.includes(0));
    const group = createGroupCommit(store.write);
    await assert.rejects(group.write([0]));
    assert.deepEqual(await group.write([7]), [14]);
  });
});
