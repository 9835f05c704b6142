// Two agent hosts, each with its own traces directory as on two machines, over one PostgreSQL
// database and one Redis: history and the workflow list answer the same whichever host is asked.
import assert from "node:assert/strict";
import { readdir } from "node:fs/promises";
import { test } from "node:test";
import { needsServer } from "@atrium/kit/testing";
import { startChatHosts } from "./chat-hosts-harness.js";

test("a step run on one agent host has its history and workflow entry on the other", async (t) => {
  if (!(await needsServer(t, "postgres")) || !(await needsServer(t, "redis"))) return;
  const hosts = await startChatHosts(t);
  const [a, b] = hosts;
  const health = (await (await fetch(`${b.rest}/health`)).json()) as { checks: object };
  assert.deepEqual(health.checks, { cache: "ok", database: "ok" });

  const workflowId = `shared_${process.pid}_${Date.now()}`;
  const res = await fetch(`${a.base}/chat`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ message: "hello there", workflow_id: workflowId }),
  });
  assert.equal(res.status, 200);
  const { step_id: stepId } = (await res.json()) as { step_id: string };

  const onA = await fetch(`${a.base}/chat/history/${workflowId}/${stepId}`);
  const onB = await fetch(`${b.base}/chat/history/${workflowId}/${stepId}`);
  assert.equal(onB.status, 200);
  const events = ((await onB.json()) as { events: { type: string; seq: number }[] }).events;
  assert.deepEqual(events, ((await onA.json()) as { events: unknown[] }).events);
  assert.equal(events.at(-1)?.type, "step_complete");
  assert.deepEqual(
    events.map((e) => e.seq),
    events.map((_, i) => i + 1),
  );

  for (const host of hosts) {
    const list = (await (await fetch(`${host.base}/chat/workflows?limit=5`)).json()) as {
      workflows: { workflow_id: string; steps: { step_id: string; updated_at: string }[] }[];
    };
    assert.deepEqual(
      list.workflows.filter((w) => w.workflow_id === workflowId).map((w) => w.steps),
      [[{ step_id: stepId, updated_at: list.workflows[0].steps[0].updated_at }]],
    );
  }
  // Nothing went to either local directory: no shared filesystem is involved.
  assert.deepEqual([...(await readdir(a.dir)), ...(await readdir(b.dir))], []);
  const missing = await fetch(`${b.base}/chat/history/${workflowId}/step_1`);
  assert.equal(missing.status, 404);
});
