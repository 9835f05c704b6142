import assert from "node:assert/strict";
import { after, afterEach, before, beforeEach, test } from "node:test";
import { createMemoryQueue, createPgliteSql, type Queue, type Sql } from "@atrium/kit";
import { eventually } from "@atrium/kit/testing";
import type { Scope } from "../domain.js";
import { createEventStore, type EventStore } from "../store/events.js";
import { migrateMemory } from "../store/migrate.js";
import { createSessionStore } from "../store/sessions.js";
import { createChainCheckScheduler } from "./chain-check-scheduler.js";
import type { ChainCheckWorker } from "./chain-check-worker.js";

let sql: Sql;
let events: EventStore;
let queue: Queue;
let adds: number;
let scope: Scope;
let sessionId: string;
let scopes = 0;

before(async () => {
  sql = await createPgliteSql();
  await migrateMemory(sql);
  events = createEventStore(sql);
});
after(() => sql.close());
let inner: Queue;
afterEach(() => inner.close());
beforeEach(async () => {
  inner = createMemoryQueue();
  adds = 0;
  queue = {
    ...inner,
    add: (...args) => {
      adds++;
      return inner.add(...args);
    },
  };
  scope = { tenantId: "t", userId: `s${++scopes}`, agentId: "a" };
  sessionId = (await createSessionStore(sql).create(scope, {})).id;
});

async function store(content: string) {
  await events.insertAll([
    {
      sessionId,
      scope,
      role: "user",
      type: "message",
      content,
      metadata: {},
      timestamp: new Date(),
    },
  ]);
}

/** Stands in for the chain check: marks what is pending as checked, optionally held midway. */
function checker() {
  const checked: string[] = [];
  let hold: Promise<void> | undefined;
  let release = () => {};
  const worker = {
    async processScope(s: Scope) {
      const pending = await events.pending(s, 100);
      await events.markChained(pending.map((e) => e.id));
      checked.push(...pending.map((e) => e.content));
      const held = hold;
      hold = undefined;
      await held;
    },
  } as unknown as ChainCheckWorker;
  return {
    worker,
    checked,
    holdNextRun() {
      hold = new Promise((resolve) => {
        release = resolve;
      });
    },
    release: () => release(),
  };
}

test("a burst of messages costs one queue add and one check", async () => {
  const check = checker();
  // Long enough that the burst lands within half the delay however slow the machine.
  const scheduler = createChainCheckScheduler({
    queue,
    events,
    worker: check.worker,
    delayMs: 2000,
  });
  scheduler.start();
  await Promise.all(
    Array.from({ length: 30 }, async (_, i) => {
      await store(`m${i}`);
      await scheduler.request(scope);
    }),
  );
  for (let i = 30; i < 35; i++) {
    await store(`m${i}`);
    await scheduler.request(scope);
  }
  assert.equal(adds, 1);
  await eventually("all checked", () => check.checked.length === 35);
  assert.deepEqual(await events.pending(scope, 1), []);
});

test("a message stored while its scope's check runs is checked after it, without an add of its own", async () => {
  const check = checker();
  const scheduler = createChainCheckScheduler({ queue, events, worker: check.worker, delayMs: 10 });
  scheduler.start();
  check.holdNextRun();
  await store("first");
  await scheduler.request(scope);
  await eventually("the first check read its message", () => check.checked.includes("first"));
  const addsBefore = adds;
  // The running check has read the pending messages already: this one is too late for it.
  await store("late");
  await scheduler.request(scope);
  assert.equal(adds, addsBefore, "the request skipped the queue");
  check.release();
  await eventually("the late message is checked", () => check.checked.includes("late"));
  await queue.drained("cognitive_chain_check");
  assert.deepEqual(await events.pending(scope, 1), []);
});

test("a sweep adds checks for every scope left with unchecked messages", async () => {
  const check = checker();
  await store("stored while no check ran");
  const scheduler = createChainCheckScheduler({ queue, events, worker: check.worker, delayMs: 0 });
  scheduler.start();
  await scheduler.sweep();
  await eventually("checked", () => check.checked.includes("stored while no check ran"));
});

test("a check that cannot be queued does not fail the request; the next sweep queues it", async () => {
  const check = checker();
  let queueDown = true;
  const errors: unknown[] = [];
  const flaky: Queue = {
    ...queue,
    add: (...args) => {
      if (queueDown) return Promise.reject(new Error("Redis is unavailable: job not queued"));
      return queue.add(...args);
    },
  };
  const scheduler = createChainCheckScheduler({
    queue: flaky,
    events,
    worker: check.worker,
    delayMs: 0,
    onQueueError: (error) => errors.push(error),
  });
  scheduler.start();
  await store("stored while Redis was away");
  await scheduler.request(scope);
  assert.equal(errors.length, 1);
  assert.equal((await events.pending(scope, 1)).length, 1, "the message waits for its check");
  queueDown = false;
  await scheduler.sweep();
  await eventually("the message is checked", () =>
    check.checked.includes("stored while Redis was away"),
  );
});
