import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { createTestPostgres, needsServer } from "@atrium/kit/testing";
import { migrateChat } from "../trace/sql-trace-store.js";
import { createFileRunStore } from "./file-run-store.js";
import type { NewRun, RunStore } from "./run-store.js";
import { createSqlRunStore } from "./sql-run-store.js";

const request = { message: "hi", agent_id: "chat", system_prompt: "", context: { a: 1 } };
const newRun = (stepId: string, status: NewRun["status"], owner = "h1"): NewRun => ({
  workflowId: "wf",
  stepId,
  request,
  status,
  owner,
  leaseMs: 60_000,
});

const stores: [string, (t: TestContext) => Promise<RunStore | undefined>][] = [
  [
    "files",
    async (t) => {
      const dir = await mkdtemp(join(tmpdir(), "runs-"));
      t.after(() => rm(dir, { recursive: true, force: true }));
      return createFileRunStore(dir);
    },
  ],
  [
    "PostgreSQL",
    async (t) => {
      if (!(await needsServer(t, "postgres"))) return undefined;
      const db = await createTestPostgres();
      t.after(() => db.drop());
      await migrateChat(db.sql);
      return createSqlRunStore(db.sql);
    },
  ],
];

for (const [name, open] of stores) {
  test(`${name}: one running step per workflow; queued steps start oldest first`, async (t) => {
    const store = await open(t);
    if (!store) return;
    const first = await store.create(newRun("step_1", "running"));
    assert.ok("created" in first);
    assert.equal(first.created.status, "running");
    assert.deepEqual(first.created.request, request);
    const second = await store.create(newRun("step_2", "running"));
    assert.ok("busy" in second);
    assert.equal(second.busy.step_id, "step_1");
    await store.create(newRun("step_3", "queued"));
    await sleep(5);
    await store.create(newRun("step_4", "queued"));
    assert.deepEqual(await store.claimQueued("wf", "step_3", "h1", 1000), { busy: true });
    assert.equal(await store.finish("wf", "step_1", "h2", { status: "completed" }), false);
    assert.equal(await store.finish("wf", "step_1", "h1", { status: "completed" }), true);
    assert.deepEqual(await store.claimQueued("wf", "step_4", "h1", 1000), { busy: true });
    const claimed = await store.claimQueued("wf", "step_3", "h2", 1000);
    assert.ok("claimed" in claimed);
    assert.equal(claimed.claimed.owner, "h2");
    assert.equal((await store.running("wf"))?.step_id, "step_3");
  });

  test(`${name}: of concurrent resumes of one pause exactly one claims it`, async (t) => {
    const store = await open(t);
    if (!store) return;
    await store.create(newRun("step_1", "running"));
    const response = { status: "yield" as const, answer: "draft", sources: [], tokens: {} };
    await store.finish("wf", "step_1", "h1", {
      status: "yielded",
      response,
      checkpoint: { at: 1 },
    });
    const paused = await store.get("wf", "step_1");
    assert.equal(paused?.status, "yielded");
    assert.equal(paused?.pauses, 1);
    assert.deepEqual(paused?.checkpoint, { at: 1 });
    const stale = await store.claimResume("wf", "step_1", 0, "h1", 1000);
    assert.equal("stale" in stale && stale.stale?.pauses, 1);
    const claims = await Promise.all(
      Array.from({ length: 8 }, (_, i) => store.claimResume("wf", "step_1", 1, `h${i}`, 1000)),
    );
    assert.equal(claims.filter((c) => "claimed" in c).length, 1);
    assert.equal(claims.filter((c) => "stale" in c).length, 7);
    const renewed = await store.renew(
      "wf",
      "step_1",
      (await store.get("wf", "step_1"))?.owner ?? "",
      1000,
    );
    assert.deepEqual(renewed, { cancelRequested: false });
    assert.equal(await store.renew("wf", "step_1", "nobody", 1000), undefined);
  });

  test(`${name}: yielded runs list newest first in pages; a decision is kept with its claim`, async (t) => {
    const store = await open(t);
    if (!store) return;
    const approval = { kind: "approval" as const, detail: "sending needs approval" };
    // Five workflows, each with a step paused in turn: three for approval, two for credentials.
    for (const [i, kind] of (
      ["approval", "credentials", "approval", "credentials", "approval"] as const
    ).entries()) {
      await store.create({ ...newRun(`step_${i}`, "running"), workflowId: `wf_${i}` });
      await sleep(3);
      await store.finish(`wf_${i}`, `step_${i}`, "h1", {
        status: "yielded",
        response: {
          status: "yield",
          answer: `draft ${i}`,
          sources: [],
          tokens: {},
          pending: [kind === "approval" ? approval : { kind, detail: "needs a key" }],
        },
        checkpoint: { at: i },
      });
    }
    await store.create({ ...newRun("step_9", "running"), workflowId: "wf_9" });
    const everything = await store.listYielded({ limit: 10 });
    assert.deepEqual(
      everything.map((r) => r.step_id),
      ["step_4", "step_3", "step_2", "step_1", "step_0"],
      "newest pause first; the running step is not listed",
    );
    const first = await store.listYielded({ limit: 2, pending: "approval" });
    assert.deepEqual(
      first.map((r) => [r.step_id, r.response?.answer]),
      [
        ["step_4", "draft 4"],
        ["step_2", "draft 2"],
      ],
    );
    const last = first[1];
    const second = await store.listYielded({
      limit: 2,
      pending: "approval",
      after: { updated_at: last.updated_at, workflow_id: last.workflow_id, step_id: last.step_id },
    });
    assert.deepEqual(
      second.map((r) => r.step_id),
      ["step_0"],
    );

    const decision = {
      pause: 1,
      decision: "approve" as const,
      decided_by: "user t1/ana",
      decided_at: new Date().toISOString(),
    };
    // A refused claim records nothing: only the decision that took effect is audited.
    assert.ok("stale" in (await store.claimResume("wf_4", "step_4", 0, "h2", 1000, decision)));
    assert.equal((await store.get("wf_4", "step_4"))?.decisions, undefined);
    const claimed = await store.claimResume("wf_4", "step_4", 1, "h2", 1000, decision);
    assert.ok("claimed" in claimed);
    assert.deepEqual(claimed.claimed.decisions, [decision]);
    await store.finish("wf_4", "step_4", "h2", { status: "completed" });
    assert.deepEqual((await store.get("wf_4", "step_4"))?.decisions, [decision]);
    assert.deepEqual(
      (await store.listYielded({ limit: 10, pending: "approval" })).map((r) => r.step_id),
      ["step_2", "step_0"],
      "a resumed step leaves the list",
    );
  });

  test(`${name}: cancel ends queued and yielded runs, marks running ones; leases expire`, async (t) => {
    const store = await open(t);
    if (!store) return;
    await store.create(newRun("step_1", "running"));
    await store.create(newRun("step_2", "queued"));
    const queued = await store.cancel("wf", "step_2", "no longer wanted");
    assert.equal(queued?.changed, true);
    assert.equal(queued?.run.status, "cancelled");
    assert.equal(queued?.run.reason, "no longer wanted");
    const running = await store.cancel("wf", "step_1", "stop");
    assert.equal(running?.changed, false);
    assert.equal(running?.run.status, "running");
    assert.equal(running?.run.cancel_requested, true);
    assert.deepEqual(await store.renew("wf", "step_1", "h1", 30), { cancelRequested: true });
    assert.equal(await store.cancel("wf", "step_9", "x"), undefined);
    await sleep(80);
    const expired = await store.expire();
    assert.deepEqual(
      expired.map((r) => [r.step_id, r.status]),
      [["step_1", "failed"]],
    );
    assert.match(expired[0].reason ?? "", /host h1 stopped renewing its lease/);
    assert.deepEqual(await store.expire(), []);
  });
}

test("files: a new store on the same directory reads the runs back", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "runs-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const before = createFileRunStore(dir);
  await before.create(newRun("step_1", "running"));
  await before.finish("wf", "step_1", "h1", { status: "yielded", checkpoint: { at: 3 } });
  await before.create(newRun("step_2", "queued"));
  await before.claimQueued("wf", "step_2", "h1", 1000);
  await before.finish("wf", "step_2", "h1", { status: "completed", reason: "done" });
  const after = createFileRunStore(dir);
  const run = await after.get("wf", "step_1");
  assert.equal(run?.status, "yielded");
  assert.deepEqual(run?.checkpoint, { at: 3 });
  // An ended run is read from its file, not kept in memory.
  assert.equal((await after.get("wf", "step_2"))?.status, "completed");
  assert.deepEqual(await after.cancel("wf", "step_2", "x").then((c) => c?.changed), false);
  assert.equal(
    ((await after.claimResume("wf", "step_2", 0, "h2", 1000)) as { stale?: { status: string } })
      .stale?.status,
    "completed",
  );
});
