import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { describe, type TestContext, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import type { Job, Queue } from "../queue/queue.js";

/**
 * Opens a fresh queue for one test and arranges to close it and remove what it left behind, or
 * returns undefined when the test was skipped.
 */
export type OpenQueue = (t: TestContext) => Promise<Queue | undefined>;

interface Fixture {
  queue: Queue;
  /** A job name unique to this test. */
  name: string;
}

async function setUp(t: TestContext, open: OpenQueue): Promise<Fixture | undefined> {
  const queue = await open(t);
  if (queue === undefined) return undefined;
  t.after(() => queue.close());
  return { queue, name: `contract-${randomUUID()}` };
}

/** A promise with its resolver, for holding a handler until the test lets it go. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

/** The behaviour every Queue adapter must share; each adapter's test file runs it. */
export function queueContract(adapter: string, open: OpenQueue): void {
  describe(`Queue contract (${adapter})`, () => {
    test("runs jobs in order with their data, once each", async (t) => {
      const f = await setUp(t, open);
      if (!f) return;
      const seen: Job<{ n: number; nested: { s: string } }>[] = [];
      const ids: string[] = [];
      for (let n = 1; n <= 3; n++)
        ids.push(await f.queue.add(f.name, { n, nested: { s: `x${n}` } }));
      assert.equal(new Set(ids).size, 3);
      f.queue.process<{ n: number; nested: { s: string } }>(f.name, async (job) => {
        seen.push(job);
      });
      await f.queue.drained(f.name);
      assert.deepEqual(
        seen.map(({ id, name, data, attempt }) => ({ id, name, data, attempt })),
        ids.map((id, i) => ({
          id,
          name: f.name,
          data: { n: i + 1, nested: { s: `x${i + 1}` } },
          attempt: 1,
        })),
      );
      assert.deepEqual(await f.queue.listFailed(f.name), []);
    });

    test("a failing job is retried with rising attempt numbers until it succeeds", async (t) => {
      const f = await setUp(t, open);
      if (!f) return;
      const attempts: number[] = [];
      f.queue.process(f.name, async (job) => {
        attempts.push(job.attempt);
        if (job.attempt < 3) throw new Error(`attempt ${job.attempt} failed`);
      });
      await f.queue.add(f.name, { retried: true }, { attempts: 3, backoffMs: 10 });
      await f.queue.drained(f.name);
      assert.deepEqual(attempts, [1, 2, 3]);
      assert.deepEqual(await f.queue.listFailed(f.name), []);
    });

    test("a job that keeps failing lands in the failed set with its error", async (t) => {
      const f = await setUp(t, open);
      if (!f) return;
      const attempts: number[] = [];
      f.queue.process(f.name, async (job) => {
        attempts.push(job.attempt);
        throw new Error("downstream said no");
      });
      const id = await f.queue.add(f.name, { doomed: 1 }, { backoffMs: 5, dedupeKey: "scope" });
      await f.queue.drained(f.name);
      assert.deepEqual(attempts, [1, 2, 3], "three attempts by default");
      const [failed, ...others] = await f.queue.listFailed(f.name);
      assert.deepEqual(others, []);
      assert.equal(failed?.id, id);
      assert.equal(failed?.name, f.name);
      assert.deepEqual(failed?.data, { doomed: 1 });
      assert.equal(failed?.attempt, 3);
      assert.equal(failed?.error, "downstream said no");
      assert.ok(failed?.failedAt instanceof Date && !Number.isNaN(failed.failedAt.getTime()));

      const again = await f.queue.add(f.name, { doomed: 2 }, { attempts: 1, dedupeKey: "scope" });
      assert.notEqual(again, id, "the dedupe key is free once the job failed");
      await f.queue.drained(f.name);
      const failedNow = await f.queue.listFailed(f.name);
      assert.deepEqual(
        failedNow.map((job) => [job.id, job.attempt]).sort(),
        [
          [again, 1],
          [id, 3],
        ].sort(),
      );
    });

    test("a dedupe key coalesces adds while its job waits, runs or retries", async (t) => {
      const f = await setUp(t, open);
      if (!f) return;
      const key = `scope-${randomUUID()}`;
      const runs: { id: string; attempt: number; data: unknown }[] = [];
      const retrying = gate();
      const release = gate();
      const first = await f.queue.add(f.name, { v: 1 }, { dedupeKey: key, backoffMs: 5 });
      assert.equal(await f.queue.add(f.name, { v: 2 }, { dedupeKey: key }), first, "while waiting");
      f.queue.process(f.name, async (job) => {
        runs.push({ id: job.id, attempt: job.attempt, data: job.data });
        if (job.id !== first) return;
        if (job.attempt === 1) throw new Error("transient");
        retrying.open();
        await release.opened;
      });
      await retrying.opened;
      assert.equal(await f.queue.add(f.name, { v: 3 }, { dedupeKey: key }), first, "while running");
      const unkeyed = await f.queue.add(f.name, { v: 4 });
      assert.notEqual(unkeyed, first);
      release.open();
      await f.queue.drained(f.name);
      const afterCompletion = await f.queue.add(f.name, { v: 5 }, { dedupeKey: key });
      assert.notEqual(afterCompletion, first, "the key is free once the job completed");
      await f.queue.drained(f.name);
      assert.deepEqual(runs, [
        { id: first, attempt: 1, data: { v: 1 } },
        { id: first, attempt: 2, data: { v: 1 } },
        { id: unkeyed, attempt: 1, data: { v: 4 } },
        { id: afterCompletion, attempt: 1, data: { v: 5 } },
      ]);
    });

    test("a delayed job waits out its delay, holding its dedupe key meanwhile", async (t) => {
      const f = await setUp(t, open);
      if (!f) return;
      const key = `delayed-${randomUUID()}`;
      const started: number[] = [];
      f.queue.process(f.name, async () => {
        started.push(Date.now());
      });
      const addedAt = Date.now();
      const first = await f.queue.add(f.name, {}, { dedupeKey: key, delayMs: 300 });
      assert.equal(await f.queue.add(f.name, {}, { dedupeKey: key }), first);
      await f.queue.drained(f.name);
      assert.equal(started.length, 1);
      // BullMQ keeps times in whole milliseconds.
      assert.ok(started[0] - addedAt >= 299, `started after ${started[0] - addedAt} ms`);
      await assert.rejects(f.queue.add(f.name, {}, { delayMs: -1 }), RangeError);
    });

    test("a job takes the id it is given; a coalesced add answers the holder's id", async (t) => {
      const f = await setUp(t, open);
      if (!f) return;
      const key = `named-${randomUUID()}`;
      const [a, b] = [`job-${randomUUID()}`, `job-${randomUUID()}`];
      const seen: string[] = [];
      assert.equal(await f.queue.add(f.name, {}, { dedupeKey: key, jobId: a }), a);
      assert.equal(await f.queue.add(f.name, {}, { dedupeKey: key, jobId: b }), a);
      f.queue.process(f.name, async (job) => {
        seen.push(job.id);
      });
      await f.queue.drained(f.name);
      assert.deepEqual(seen, [a]);
      await assert.rejects(f.queue.add(f.name, {}, { jobId: "12" }), RangeError);
      await assert.rejects(f.queue.add(f.name, {}, { jobId: "a:b" }), RangeError);
    });

    test("a running job that releases its dedupe key lets the next add create a job", async (t) => {
      const f = await setUp(t, open);
      if (!f) return;
      const key = `released-${randomUUID()}`;
      const released = gate();
      const secondRunning = gate();
      const finishFirst = gate();
      const finishSecond = gate();
      const ran: unknown[] = [];
      f.queue.process(
        f.name,
        async (job) => {
          ran.push(job.data);
          if ((job.data as { n: number }).n === 1) {
            await job.releaseDedupeKey();
            released.open();
            await finishFirst.opened;
          } else {
            secondRunning.open();
            await finishSecond.opened;
          }
        },
        { concurrency: 2 },
      );
      const first = await f.queue.add(f.name, { n: 1 }, { dedupeKey: key });
      await released.opened;
      const second = await f.queue.add(f.name, { n: 2 }, { dedupeKey: key });
      assert.notEqual(second, first);
      await secondRunning.opened;
      finishFirst.open();
      // Time for the first job's completion to reach the queue: it must not free the key the
      // second job holds now.
      await sleep(200);
      assert.equal(await f.queue.add(f.name, { n: 3 }, { dedupeKey: key }), second);
      finishSecond.open();
      await f.queue.drained(f.name);
      assert.deepEqual(ran, [{ n: 1 }, { n: 2 }]);
    });

    test("no more jobs run at once than the concurrency allows", async (t) => {
      const f = await setUp(t, open);
      if (!f) return;
      let running = 0;
      let mostAtOnce = 0;
      let completed = 0;
      const twoRunning = gate();
      f.queue.process(
        f.name,
        async () => {
          running++;
          mostAtOnce = Math.max(mostAtOnce, running);
          if (running === 2) twoRunning.open();
          // Only a queue that never starts a second job would wait out the whole deadline.
          await Promise.race([twoRunning.opened, sleep(10_000, undefined, { ref: false })]);
          await sleep(5);
          running--;
          completed++;
        },
        { concurrency: 2 },
      );
      for (let i = 0; i < 6; i++) await f.queue.add(f.name, { i });
      await f.queue.drained(f.name);
      assert.equal(completed, 6);
      assert.equal(mostAtOnce, 2);
    });

    test("jobs of another name are left to that name's handler", async (t) => {
      const f = await setUp(t, open);
      if (!f) return;
      const other = `${f.name}-other`;
      const handled: string[] = [];
      f.queue.process(f.name, async (job) => {
        handled.push(job.name);
      });
      assert.throws(() => f.queue.process(f.name, async () => undefined), /already/);
      await f.queue.add(other, {});
      await f.queue.add(f.name, {});
      await f.queue.drained(f.name);
      assert.deepEqual(handled, [f.name]);
      await assert.rejects(f.queue.add(f.name, {}, { attempts: 0 }), RangeError);
    });

    test("close waits for the jobs that are running", async (t) => {
      const f = await setUp(t, open);
      if (!f) return;
      const started = gate();
      let finished = false;
      f.queue.process(f.name, async () => {
        started.open();
        await sleep(50);
        finished = true;
      });
      await f.queue.add(f.name, {});
      await started.opened;
      await f.queue.close();
      assert.equal(finished, true);
      await assert.rejects(f.queue.add(f.name, {}), /closed/);
    });

    test("close with a grace stops waiting for a job that outlives it", async (t) => {
      const f = await setUp(t, open);
      if (!f) return;
      const started = gate();
      const release = gate();
      let finished = false;
      f.queue.process(f.name, async () => {
        started.open();
        await release.opened;
        finished = true;
      });
      await f.queue.add(f.name, {});
      await started.opened;
      // A close that waited for the job, or left a connection retrying, would hang this file.
      await f.queue.close({ graceMs: 50 });
      assert.equal(finished, false);
      release.open();
    });

    test("drained resolves at once for a name with no jobs", async (t) => {
      const f = await setUp(t, open);
      if (!f) return;
      await f.queue.drained(f.name);
      assert.deepEqual(await f.queue.listFailed(f.name), []);
    });
  });
}
