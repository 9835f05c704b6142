import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { createMemoryCache } from "@atrium/kit";
import { createTraceBus } from "./trace-bus.js";
import type { TraceEvent } from "./trace-event.js";

test("publish numbers events per workflow, logs, publishes and writes the step's file", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "traces-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const cache = createMemoryCache();
  const bus = createTraceBus({ cache, tracesDir: dir, logCapacity: 3 });
  t.after(() => bus.close());
  const live: TraceEvent[] = [];
  // Delivery comes on a later turn, as from a Redis server: publish does not wait for it.
  let complete = () => {};
  const completed = new Promise<void>((resolve) => {
    complete = resolve;
  });
  const unsubscribe = await bus.subscribe("wf1", (e) => {
    live.push(e);
    if (e.type === "step_complete") complete();
  });
  const trace = bus.forStep("wf1", "step_1");
  for (let i = 0; i < 5; i++) void trace.emit("thinking", { thought: `t${i}` });
  await bus.publish({ workflow_id: "wf2", step_id: "step_9", type: "thinking", data: {} });
  await trace.emit("step_complete", { summary: "done" });
  await completed;
  await unsubscribe();

  assert.deepEqual(
    live.map((e) => e.seq),
    [1, 2, 3, 4, 5, 6],
  );
  const replay = await bus.replay("wf1");
  assert.deepEqual(
    replay.map((e) => e.seq),
    [4, 5, 6],
    "the log keeps only the newest logCapacity events",
  );
  assert.equal((await bus.replay("wf2"))[0].seq, 1, "sequence numbers are per workflow");
  const history = await bus.history("wf1", "step_1");
  assert.equal(history.length, 6);
  assert.deepEqual(history[5].data, { summary: "done" });
  assert.match(history[0].timestamp, /^\d{4}-\d\d-\d\dT/);
  const text = await readFile(join(dir, "wf1", "step_1.jsonl"), "utf8");
  const lines = text.trim().split("\n");
  assert.equal(lines.length, 6);
  assert.deepEqual(
    lines.map((line) => JSON.parse(line)),
    history,
    "each file line is the whole event, seq included",
  );
  assert.deepEqual(
    lines.slice(3),
    await cache.lrange("trace_log:wf1", 0, -1),
    "the file holds the very lines the log and the channel carry",
  );
});

test("history rejects ids that could leave the traces directory", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "traces-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const bus = createTraceBus({ tracesDir: dir });
  t.after(() => bus.close());
  for (const [wf, step] of [
    ["..", "x"],
    ["wf", "../../etc/passwd"],
    ["wf/..", "x"],
    [".hidden", "x"],
    ["wf", ""],
  ]) {
    await assert.rejects(bus.history(wf, step), { failure: "invalid_id" });
  }
  await assert.rejects(bus.history("wf", "nope"), { failure: "not_found" });
});

test("without a cache the bus still writes trace files but cannot stream", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "traces-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const bus = createTraceBus({ tracesDir: dir });
  t.after(() => bus.close());
  await bus.forStep("wf", "s").emit("thinking", { thought: "x" });
  assert.equal((await bus.history("wf", "s")).length, 1);
  assert.deepEqual(await bus.replay("wf"), []);
  await assert.rejects(bus.subscribe("wf", () => {}));
});

test("a workflow's log and sequence expire after the retention", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "traces-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const cache = createMemoryCache();
  t.after(() => cache.close());
  const bus = createTraceBus({ cache, tracesDir: dir, retentionSeconds: 1 });
  t.after(() => bus.close());
  await bus.forStep("wf_ttl", "s").emit("thinking", { thought: "x" });
  assert.equal((await bus.replay("wf_ttl")).length, 1);
  while ((await bus.replay("wf_ttl")).length > 0) await sleep(100);
  assert.equal(await cache.get("trace_seq:wf_ttl"), null);
  assert.equal((await bus.history("wf_ttl", "s")).length, 1, "trace files are kept");
});

test("step ids keep the step_<unix seconds> form and never repeat within a workflow", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "traces-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  for (const cache of [createMemoryCache(), undefined]) {
    const bus = createTraceBus({ cache, tracesDir: dir });
    const ids = await Promise.all(Array.from({ length: 5 }, () => bus.newStepId("wf_steps")));
    assert.equal(new Set(ids).size, 5);
    const seconds = ids.map((id) => Number(/^step_(\d{10})$/.exec(id)?.[1]));
    assert.ok(seconds.every((s) => Math.abs(s - Date.now() / 1000) < 60));
    assert.ok((await bus.newStepId("wf_other")).startsWith("step_"));
    await cache?.close();
  }
});
