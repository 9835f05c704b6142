import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import type { TraceEvent } from "./trace-event.js";
import { createTraceFiles } from "./trace-files.js";

const event = (workflow_id: string, step_id: string): TraceEvent => ({
  workflow_id,
  step_id,
  seq: 1,
  type: "thinking",
  data: {},
  timestamp: new Date().toISOString(),
});

async function writeOldStep(dir: string, workflowId: string, stepId: string, at: string) {
  await mkdir(join(dir, workflowId), { recursive: true });
  const path = join(dir, workflowId, `${stepId}.jsonl`);
  await writeFile(path, `${JSON.stringify(event(workflowId, stepId))}\n`);
  await utimes(path, new Date(at), new Date(at));
}

test("workflows lists the traces found on disk and those written since, most recent first", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "traces-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await writeOldStep(dir, "wf_old", "step_1", "2026-01-01T00:00:00Z");
  await writeOldStep(dir, "wf_old", "step_2", "2026-01-03T00:00:00Z");
  await writeOldStep(dir, "wf_mid", "step_1", "2026-01-02T00:00:00Z");
  // Neither a workflow nor a step: ignored.
  await mkdir(join(dir, "wf_empty"));
  await writeFile(join(dir, "wf_mid", "notes.txt"), "x");
  const files = createTraceFiles(dir);
  t.after(() => files.close());

  assert.deepEqual(await files.workflows(10), [
    {
      workflow_id: "wf_old",
      updated_at: "2026-01-03T00:00:00.000Z",
      steps: [
        { step_id: "step_2", updated_at: "2026-01-03T00:00:00.000Z" },
        { step_id: "step_1", updated_at: "2026-01-01T00:00:00.000Z" },
      ],
    },
    {
      workflow_id: "wf_mid",
      updated_at: "2026-01-02T00:00:00.000Z",
      steps: [{ step_id: "step_1", updated_at: "2026-01-02T00:00:00.000Z" }],
    },
  ]);

  // A write moves its workflow to the top, with the steps found on disk kept.
  await files.append(event("wf_mid", "step_2"));
  await files.append(event("wf_new", "step_1"));
  await files.append(event("wf_mid", "step_3"));
  const listed = await files.workflows(10);
  assert.deepEqual(
    listed.map((w) => [w.workflow_id, w.steps.map((s) => s.step_id)]),
    [
      ["wf_mid", ["step_3", "step_2", "step_1"]],
      ["wf_new", ["step_1"]],
      ["wf_old", ["step_2", "step_1"]],
    ],
  );
  assert.ok(Date.parse(listed[0].updated_at) > Date.parse("2026-01-03T00:00:00Z"));
  assert.deepEqual(
    (await files.workflows(2)).map((w) => w.workflow_id),
    ["wf_mid", "wf_new"],
  );
});

test("a step whose file was removed leaves the listing once its history is not found", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "traces-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const files = createTraceFiles(dir);
  t.after(() => files.close());
  await files.append(event("wf_a", "step_1"));
  await files.append(event("wf_b", "step_1"));
  await files.append(event("wf_b", "step_2"));
  assert.equal((await files.workflows(10)).length, 2);

  await files.close();
  await rm(join(dir, "wf_a"), { recursive: true });
  await rm(join(dir, "wf_b", "step_1.jsonl"));
  await assert.rejects(files.read("wf_a", "step_1"), { failure: "not_found" });
  await assert.rejects(files.read("wf_b", "step_1"), { failure: "not_found" });

  assert.deepEqual(
    (await files.workflows(10)).map((w) => [w.workflow_id, w.steps.map((s) => s.step_id)]),
    [["wf_b", ["step_2"]]],
  );
});

test("workflows of a traces directory that does not exist yet is an empty list", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "traces-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const files = createTraceFiles(join(dir, "not-yet"));
  t.after(() => files.close());
  assert.deepEqual(await files.workflows(5), []);
  await files.append(event("wf_a", "step_1"));
  assert.deepEqual(
    (await files.workflows(5)).map((w) => w.workflow_id),
    ["wf_a"],
  );
});
