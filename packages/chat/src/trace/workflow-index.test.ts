import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { createWorkflowIndex } from "./workflow-index.js";

const order = async (index: ReturnType<typeof createWorkflowIndex>) =>
  (await index.list(10)).map((w) => [w.workflow_id, w.steps.map((s) => s.step_id)]);

test("steps written in the same millisecond list the later one first", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "traces-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const index = createWorkflowIndex(dir);
  index.touch("wf", "step_1", 1_000);
  index.touch("wf", "step_2", 1_000);
  index.touch("wf", "step_3", 1_000);
  assert.deepEqual(await order(index), [["wf", ["step_3", "step_2", "step_1"]]]);
});

test("writes before the first listing are merged with the directory, the later time winning", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "traces-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  for (const [workflow, at] of [
    ["wf_a", "2026-01-01T00:00:00Z"],
    ["wf_b", "2026-01-02T00:00:00Z"],
  ]) {
    await mkdir(join(dir, workflow));
    await writeFile(join(dir, workflow, "step_1.jsonl"), "{}\n");
    await utimes(join(dir, workflow, "step_1.jsonl"), new Date(at), new Date(at));
  }
  const index = createWorkflowIndex(dir);
  // wf_a's file is older on disk than this write; wf_b's is newer than this stale one.
  index.touch("wf_a", "step_1", Date.parse("2026-01-03T00:00:00Z"));
  index.touch("wf_b", "step_1", Date.parse("2025-12-31T00:00:00Z"));
  const listed = await index.list(10);
  assert.deepEqual(
    listed.map((w) => [w.workflow_id, w.updated_at]),
    [
      ["wf_a", "2026-01-03T00:00:00.000Z"],
      ["wf_b", "2026-01-02T00:00:00.000Z"],
    ],
  );
});
