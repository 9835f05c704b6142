// Two agent hosts over one PostgreSQL database and one Redis, as behind one address: a step that
// yields on one host is resumed on the other, and a step running on one is cancelled from the other.
import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import type { TraceEvent } from "@atrium/chat";
import { needsServer } from "@atrium/kit/testing";
import { startChatHosts, startTeamHook } from "./chat-hosts-harness.js";

interface Answer {
  status: string;
  step_id: string;
  answer: string;
  error: string;
  pause: number;
  host: string;
  reason: string;
  pending: { kind: string; detail: string }[];
  events: TraceEvent[];
}

const call = async (base: string, path: string, body?: unknown, method = "POST") => {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Answer };
};

test("a step that yields for approval on one host resumes on the other, once", async (t) => {
  if (!(await needsServer(t, "postgres")) || !(await needsServer(t, "redis"))) return;
  const hook = await startTeamHook(t);
  const [a, b] = await startChatHosts(t, { env: { COMMUNICATOR_WEBHOOK_URL: hook.url } });
  const workflowId = `resume_${process.pid}_${Date.now()}`;

  const asked = await call(a.base, "/chat", {
    message: "send a message to the team: the release is out",
    workflow_id: workflowId,
  });
  assert.equal(asked.status, 200);
  assert.equal(asked.body.status, "yield");
  assert.equal(asked.body.pending[0].kind, "approval");
  const stepId = asked.body.step_id;
  const path = `/chat/runs/${workflowId}/${stepId}`;
  const waiting = await call(b.base, path, undefined, "GET");
  assert.equal(waiting.body.status, "yielded");
  assert.equal(waiting.body.pause, 1);
  assert.equal(hook.posts.length, 0, "nothing is sent before the approval");

  // Two approvals arrive at once, one at each host: exactly one resumes the step.
  const [onB, onA] = await Promise.all([
    call(b.base, `${path}/resume`, { approval: "approve", pause: 1 }),
    call(a.base, `${path}/resume`, { approval: "approve", pause: 1 }),
  ]);
  assert.deepEqual([onB.status, onA.status].sort(), [200, 409]);
  const resumed = onB.status === 200 ? onB : onA;
  assert.equal(resumed.body.status, "success");
  assert.equal(resumed.body.step_id, stepId);
  assert.deepEqual(
    hook.posts.map((p) => p.text),
    ["send a message to the team: the release is out"],
  );

  for (const host of [a, b]) {
    const events = (
      await call(host.base, `/chat/history/${workflowId}/${stepId}`, undefined, "GET")
    ).body.events;
    const phases = events.filter((e) => e.type === "thinking").map((e) => e.data.phase);
    assert.equal(phases.filter((p) => p === "pause").length, 1, "one pause");
    assert.equal(phases.filter((p) => p === "resume").length, 1, "one resumption");
    assert.equal(phases.filter((p) => p === "orient").length, 1, "routed once, before the pause");
    assert.deepEqual(
      events.filter((e) => e.type === "tool_start").map((e) => e.data.tool),
      ["webhook.send"],
    );
    assert.deepEqual(
      events.filter((e) => e.type === "step_complete").map((e) => e.data.status),
      ["yield", "success"],
    );
  }
  const done = await call(a.base, path, undefined, "GET");
  assert.equal(done.body.status, "completed");
  const again = await call(a.base, `${path}/resume`, { approval: "approve" });
  assert.equal(again.status, 409);
});

test("a step running on one host is cancelled from the other within a second", async (t) => {
  if (!(await needsServer(t, "postgres")) || !(await needsServer(t, "redis"))) return;
  // The coder runs the message's code block; this one loops until the 60 s sandbox limit.
  const [a, b] = await startChatHosts(t, { env: { SANDBOX_TIMEOUT: "60s" } });
  const workflowId = `cancel_${process.pid}_${Date.now()}`;
  const started = await call(a.base, "/chat/runs", {
    message: "Run this: ```js\nfor (;;) {}\n```",
    workflow_id: workflowId,
  });
  assert.equal(started.status, 202);
  const stepId = started.body.step_id;
  const path = `/chat/runs/${workflowId}/${stepId}`;
  // Wait until the sandbox is running the loop.
  for (;;) {
    const history = await call(b.base, `/chat/history/${workflowId}/${stepId}`, undefined, "GET");
    if (history.status === 200 && history.body.events.some((e) => e.type === "tool_start")) break;
    await sleep(20);
  }
  const running = await call(b.base, path, undefined, "GET");
  assert.equal(running.body.status, "running");

  const asked = performance.now();
  const cancelled = await call(b.base, `${path}/cancel`);
  const took = performance.now() - asked;
  assert.equal(cancelled.status, 200);
  assert.equal(cancelled.body.status, "cancelled");
  assert.equal(cancelled.body.host, running.body.host, "the host that ran it recorded the end");
  assert.ok(took < 1000, `cancelled from the other host in ${Math.round(took)} ms`);
  t.diagnostic(`cancelled from the other host in ${Math.round(took)} ms`);

  const events = (await call(a.base, `/chat/history/${workflowId}/${stepId}`, undefined, "GET"))
    .body.events;
  assert.deepEqual(events.at(-1)?.data, {
    summary: "cancelled: cancelled by request",
    status: "failure",
  });
  assert.equal(events.filter((e) => e.type === "step_complete").length, 1);
  // The workflow is free at once: the next message runs (and answers) on either host.
  const next = await call(b.base, "/chat", {
    message: "Run this: ```js\n1 + 1\n```",
    workflow_id: workflowId,
  });
  assert.equal(next.status, 200);
  assert.equal(next.body.answer, "2");
});
