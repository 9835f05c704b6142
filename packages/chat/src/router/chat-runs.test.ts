import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { createMemoryCache } from "@atrium/kit";
import type { KernelInput, KernelOutput } from "../kernel/kernel-types.js";
import { startTestChatApp } from "../testing/chat-app.js";
import type { TraceEvent } from "../trace/trace-event.js";

/** The fields these tests read from the answers. */
interface Answer {
  status: string;
  step_id: string;
  answer: string;
  error: string;
  pause: number;
  pending: unknown;
  checkpoint?: unknown;
  reason: string;
  response: { answer: string };
  lease_expires_at: string;
  events: TraceEvent[];
}

const call = async (base: string, path: string, body?: unknown, method = "POST") => {
  const res = await fetch(`${base}/api/v1${path}`, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return {
    status: res.status,
    headers: res.headers,
    body: (await res.json()) as Answer,
  };
};

const history = async (base: string, workflowId: string, stepId: string) =>
  (await call(base, `/chat/history/${workflowId}/${stepId}`, undefined, "GET")).body.events;

/** A kernel that asks for approval once, then sends: what the communicator does. */
function approvalKernel() {
  const calls: KernelInput[] = [];
  const execute = async (input: KernelInput): Promise<KernelOutput> => {
    calls.push(input);
    if (!input.resume) {
      await input.trace.emit("tool_start", { call_id: "1", tool: "memory.context" });
      return {
        status: "yield",
        summary: "Draft ready: hello team",
        metadata: {
          pending: [{ kind: "approval", detail: "sending this message needs approval" }],
          checkpoint: { draft: "hello team", at: 2 },
        },
      };
    }
    await input.trace.emit("tool_start", { call_id: "2", tool: "webhook.send" });
    return { status: "success", summary: "Sent: hello team", metadata: {} };
  };
  return { calls, execute };
}

test("a yielded step resumes once from its checkpoint; a second or stale resume is 409", async (t) => {
  const kernel = approvalKernel();
  const chat = await startTestChatApp(createMemoryCache(), kernel.execute);
  t.after(() => chat.close());
  const first = await call(chat.base, "/chat", { message: "tell the team", workflow_id: "wf_res" });
  assert.equal(first.status, 200);
  assert.equal(first.body.status, "yield");
  const stepId = first.body.step_id;

  const status = await call(chat.base, `/chat/runs/wf_res/${stepId}`, undefined, "GET");
  assert.equal(status.body.status, "yielded");
  assert.equal(status.body.pause, 1);
  assert.deepEqual(status.body.pending, [
    { kind: "approval", detail: "sending this message needs approval" },
  ]);
  assert.equal(status.body.checkpoint, undefined, "the checkpoint stays inside");

  const stale = await call(chat.base, `/chat/runs/wf_res/${stepId}/resume`, {
    approval: "approve",
    pause: 0,
  });
  assert.equal(stale.status, 409);
  assert.match(stale.body.error, /pause 0 .* is stale/);

  const [resumed, again] = await Promise.all([
    call(chat.base, `/chat/runs/wf_res/${stepId}/resume`, { approval: "approve", pause: 1 }),
    call(chat.base, `/chat/runs/wf_res/${stepId}/resume`, { approval: "approve", pause: 1 }),
  ]);
  const [ok, refused] = resumed.status === 200 ? [resumed, again] : [again, resumed];
  assert.equal(ok.status, 200);
  assert.deepEqual(
    { step_id: ok.body.step_id, status: ok.body.status, answer: ok.body.answer },
    { step_id: stepId, status: "success", answer: "Sent: hello team" },
  );
  assert.equal(refused.status, 409);
  assert.match(refused.body.error, /not yielded|stale/);
  assert.equal(kernel.calls.length, 2, "the kernel ran once before the pause and once after");
  assert.deepEqual(kernel.calls[1].resume, { checkpoint: { draft: "hello team", at: 2 } });
  assert.equal(kernel.calls[1].context.approved, true);
  assert.equal(kernel.calls[1].context.step_id, stepId);

  const events = await history(chat.base, "wf_res", stepId);
  const phases = events.filter((e) => e.type === "thinking").map((e) => e.data.phase);
  assert.deepEqual(phases, ["pause", "resume"]);
  assert.deepEqual(
    events.filter((e) => e.type === "tool_start").map((e) => e.data.tool),
    ["memory.context", "webhook.send"],
    "the tool before the pause ran once",
  );
  assert.deepEqual(
    events.filter((e) => e.type === "step_complete").map((e) => e.data.status),
    ["yield", "success"],
  );
  const done = await call(chat.base, `/chat/runs/wf_res/${stepId}`, undefined, "GET");
  assert.equal(done.body.status, "completed");
  const late = await call(chat.base, `/chat/runs/wf_res/${stepId}/resume`, {});
  assert.equal(late.status, 409);
  assert.match(late.body.error, /is completed, not yielded/);
  assert.equal((await call(chat.base, "/chat/runs/wf_res/step_1/resume", {})).status, 404);
  assert.equal(
    (await call(chat.base, `/chat/runs/wf_res/${stepId}/resume`, { approval: "yes" })).status,
    400,
  );
});

test("a denied approval ends the step as failed without running the kernel", async (t) => {
  const kernel = approvalKernel();
  const chat = await startTestChatApp(createMemoryCache(), kernel.execute);
  t.after(() => chat.close());
  const first = await call(chat.base, "/chat", {
    message: "tell the team",
    workflow_id: "wf_deny",
  });
  const stepId = first.body.step_id;
  const denied = await call(chat.base, `/chat/runs/wf_deny/${stepId}/resume`, { approval: "deny" });
  assert.equal(denied.status, 200);
  assert.equal(denied.body.status, "failure");
  assert.match(denied.body.answer, /^denied/);
  assert.equal(kernel.calls.length, 1);
  const run = await call(chat.base, `/chat/runs/wf_deny/${stepId}`, undefined, "GET");
  assert.equal(run.body.status, "failed");
  assert.equal(run.body.reason, "approval denied");
});

test("the steps waiting for approval are listed newest first; each decision is audited on the run", async (t) => {
  const kernel = approvalKernel();
  const chat = await startTestChatApp(createMemoryCache(), kernel.execute);
  t.after(() => chat.close());
  const list = async (query: string) => {
    const res = await fetch(`${chat.base}/api/v1/chat/runs${query}`);
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const asked = [];
  for (const workflowId of ["wf_a1", "wf_a2", "wf_a3"]) {
    const answer = await call(chat.base, "/chat", {
      message: "tell the team",
      workflow_id: workflowId,
      context: { user_id: "ana", session_id: "s1", secret_note: "not listed" },
    });
    assert.equal(answer.body.status, "yield");
    asked.push({ workflowId, stepId: answer.body.step_id });
    await sleep(3);
  }
  const page = await list("?status=yielded&pending=approval&limit=2");
  assert.equal(page.status, 200);
  const runs = page.body.runs as Record<string, unknown>[];
  assert.deepEqual(
    runs.map((r) => r.workflow_id),
    ["wf_a3", "wf_a2"],
  );
  assert.deepEqual(
    { ...runs[0], asked_at: undefined, created_at: undefined },
    {
      workflow_id: "wf_a3",
      step_id: asked[2].stepId,
      pause: 1,
      pending: [{ kind: "approval", detail: "sending this message needs approval" }],
      draft: "Draft ready: hello team",
      message: "tell the team",
      asked_by: { user_id: "ana", session_id: "s1", agent_id: "chat", workflow_id: "wf_a3" },
      asked_at: undefined,
      created_at: undefined,
    },
  );
  const next = await list(
    `?status=yielded&pending=approval&limit=2&cursor=${page.body.next_cursor}`,
  );
  assert.deepEqual(
    (next.body.runs as { workflow_id: string }[]).map((r) => r.workflow_id),
    ["wf_a1"],
  );
  assert.equal(next.body.next_cursor, undefined, "the last page has no cursor");

  for (const [query, field] of [
    ["", "status"],
    ["?status=running", "status"],
    ["?status=yielded&limit=0", "limit"],
    ["?status=yielded&limit=abc", "limit"],
    ["?status=yielded&limit=201", "limit"],
    ["?status=yielded&pending=money", "pending"],
    ["?status=yielded&cursor=nonsense", "cursor"],
  ]) {
    const refused = await list(query);
    assert.equal(refused.status, 400, query);
    assert.match(String(refused.body.error), new RegExp(`^${field} must`), query);
  }

  // This app authenticates nobody: credentials a caller sends name nobody in the audit.
  const spoofs: Record<string, string>[] = [
    { "x-api-key": "k" },
    { authorization: "Bearer eyJhbGciOiJub25lIn0.eyJ1c2VyX2lkIjoiYm9zcyJ9." },
  ];
  const resume = (workflowId: string, stepId: string, approval: string, spoof = spoofs[0]) =>
    fetch(`${chat.base}/api/v1/chat/runs/${workflowId}/${stepId}/resume`, {
      method: "POST",
      headers: { "content-type": "application/json", ...spoof },
      body: JSON.stringify({ approval, pause: 1 }),
    });
  assert.equal((await resume("wf_a3", asked[2].stepId, "approve")).status, 200);
  assert.equal((await resume("wf_a2", asked[1].stepId, "deny", spoofs[1])).status, 200);
  // A refused (second) decision is not recorded.
  assert.equal((await resume("wf_a3", asked[2].stepId, "deny")).status, 409);
  const approved = await call(chat.base, `/chat/runs/wf_a3/${asked[2].stepId}`, undefined, "GET");
  const denied = await call(chat.base, `/chat/runs/wf_a2/${asked[1].stepId}`, undefined, "GET");
  assert.equal(approved.body.status, "completed");
  assert.equal(denied.body.status, "failed");
  const decisions = (body: unknown) =>
    (body as { decisions: Record<string, unknown>[] }).decisions.map((d) => {
      assert.ok(Date.parse(String(d.decided_at)) > 0);
      return { ...d, decided_at: "t" };
    });
  assert.deepEqual(decisions(approved.body), [
    { pause: 1, decision: "approve", decided_by: "unauthenticated", decided_at: "t" },
  ]);
  assert.deepEqual(decisions(denied.body), [
    { pause: 1, decision: "deny", decided_by: "unauthenticated", decided_at: "t" },
  ]);
  const thoughts = (await history(chat.base, "wf_a3", asked[2].stepId))
    .filter((e) => e.type === "thinking" && e.data.phase === "resume")
    .map((e) => String(e.data.thought));
  assert.equal(thoughts.length, 1);
  assert.match(thoughts[0], /approval granted by unauthenticated/);
  assert.doesNotMatch(thoughts[0], /hello team/, "the audit does not copy the draft");
  assert.deepEqual(
    ((await list("?status=yielded")).body.runs as { workflow_id: string }[]).map(
      (r) => r.workflow_id,
    ),
    ["wf_a1"],
    "decided steps leave the list",
  );
});

test("cancel stops a running step within a second, even one that ignores its signal", async (t) => {
  let aborted: unknown;
  const chat = await startTestChatApp(createMemoryCache(), async (input) => {
    input.signal?.addEventListener("abort", () => {
      aborted = input.signal?.reason;
    });
    await input.trace.emit("thinking", { thought: "working" });
    await sleep(60_000, undefined, { ref: false });
    return { status: "success", summary: "too late", metadata: {} };
  });
  t.after(() => chat.close());
  const started = await call(chat.base, "/chat/runs", {
    message: "long",
    workflow_id: "wf_cancel",
  });
  assert.equal(started.status, 202);
  assert.equal(started.body.status, "running");
  const stepId = started.body.step_id;
  assert.equal(started.headers.get("location"), `/api/v1/chat/runs/wf_cancel/${stepId}`);
  while ((await chat.bus.replay("wf_cancel")).length === 0) await sleep(5);

  const asked = performance.now();
  const cancelled = await call(chat.base, `/chat/runs/wf_cancel/${stepId}/cancel`);
  const took = performance.now() - asked;
  assert.equal(cancelled.status, 200);
  assert.equal(cancelled.body.status, "cancelled");
  assert.ok(took < 1000, `cancelled in ${took} ms`);
  assert.ok(aborted instanceof Error, "the step's signal was aborted");
  const events = await history(chat.base, "wf_cancel", stepId);
  assert.deepEqual(events.at(-1)?.data, {
    summary: "cancelled: cancelled by request",
    status: "failure",
  });
  const twice = await call(chat.base, `/chat/runs/wf_cancel/${stepId}/cancel`);
  assert.equal(twice.status, 409);
  assert.match(twice.body.error, /already cancelled/);
});

test("a second message on a busy workflow: reject (409), enqueue, interrupt", async (t) => {
  const releases: (() => void)[] = [];
  const chat = await startTestChatApp(createMemoryCache(), async (input) => {
    await new Promise<void>((resolve, reject) => {
      releases.push(resolve);
      input.signal?.addEventListener("abort", () => reject(input.signal?.reason));
    });
    return { status: "success", summary: `did ${input.task}`, metadata: {} };
  });
  t.after(() => chat.close());
  const waitForRuns = async (n: number) => {
    while (releases.length < n) await sleep(5);
  };
  const first = call(chat.base, "/chat", { message: "one", workflow_id: "wf_busy" });
  await waitForRuns(1);
  const rejected = await call(chat.base, "/chat", { message: "two", workflow_id: "wf_busy" });
  assert.equal(rejected.status, 409);
  assert.match(rejected.body.error, /workflow wf_busy is busy/);
  assert.equal(rejected.body.status, "running");

  const queued = call(chat.base, "/chat", {
    message: "three",
    workflow_id: "wf_busy",
    on_busy: "enqueue",
  });
  await sleep(300);
  assert.equal(releases.length, 1, "the queued step waits");
  releases[0]();
  assert.equal((await first).body.answer, "did one");
  await waitForRuns(2);
  releases[1]();
  assert.equal((await queued).body.answer, "did three");

  const running = await call(chat.base, "/chat/runs", { message: "four", workflow_id: "wf_busy" });
  await waitForRuns(3);
  const interrupting = call(chat.base, "/chat", {
    message: "five",
    workflow_id: "wf_busy",
    on_busy: "interrupt",
  });
  await waitForRuns(4);
  const stopped = await call(
    chat.base,
    `/chat/runs/wf_busy/${running.body.step_id}`,
    undefined,
    "GET",
  );
  assert.equal(stopped.body.status, "cancelled");
  assert.match(stopped.body.reason, /interrupted by step/);
  releases[3]();
  assert.equal((await interrupting).body.answer, "did five");
  assert.equal((await call(chat.base, "/chat", { message: "x", on_busy: "later" })).status, 400);
});

test("a background run reports running, then completed; the stream and history work as for POST /chat", async (t) => {
  let release!: () => void;
  const chat = await startTestChatApp(createMemoryCache(), async (input) => {
    await input.trace.emit("thinking", { thought: "hm" });
    await new Promise<void>((r) => {
      release = r;
    });
    return { status: "success", summary: "done", metadata: {} };
  });
  t.after(() => chat.close());
  const started = await call(chat.base, "/chat/runs", { message: "bg", workflow_id: "wf_bg" });
  assert.equal(started.status, 202);
  const path = `/chat/runs/wf_bg/${started.body.step_id}`;
  while (!release) await sleep(5);
  const running = await call(chat.base, path, undefined, "GET");
  assert.equal(running.body.status, "running");
  assert.ok(Date.parse(running.body.lease_expires_at) > Date.now());
  release();
  let now = running;
  while (now.body.status === "running") now = await call(chat.base, path, undefined, "GET");
  assert.equal(now.body.status, "completed");
  assert.equal(now.body.response.answer, "done");
  // The run is recorded as ended just before its step_complete is published.
  let events = await history(chat.base, "wf_bg", started.body.step_id);
  while (events.at(-1)?.type !== "step_complete") {
    await sleep(5);
    events = await history(chat.base, "wf_bg", started.body.step_id);
  }
  assert.deepEqual(
    events.map((e) => e.type),
    ["thinking", "step_complete"],
  );
  assert.equal((await call(chat.base, "/chat/runs/wf_bg/step_9", undefined, "GET")).status, 404);
  assert.equal((await call(chat.base, "/chat/runs/wf%2F..%2Fx/s", undefined, "GET")).status, 400);
});

test("a step whose host stopped renewing its lease becomes failed with the reason", async (t) => {
  const chat = await startTestChatApp(
    createMemoryCache(),
    async () => ({
      status: "success",
      metadata: {},
    }),
    { runLeaseMs: 150 },
  );
  t.after(() => chat.close());
  // What a host that died mid-step leaves behind: a running record nobody renews.
  await chat.bus.store.runs.create({
    workflowId: "wf_dead",
    stepId: "step_1",
    request: { message: "x", agent_id: "chat", system_prompt: "", context: {} },
    status: "running",
    owner: "host_gone",
    leaseMs: 100,
  });
  let run = await chat.bus.store.runs.get("wf_dead", "step_1");
  while (run?.status === "running") {
    await sleep(20);
    run = await chat.bus.store.runs.get("wf_dead", "step_1");
  }
  assert.equal(run?.status, "failed");
  assert.match(run?.reason ?? "", /host host_gone stopped renewing its lease/);
  let events: TraceEvent[] = [];
  while (events.at(-1)?.type !== "step_complete") {
    await sleep(5);
    events = await chat.bus.history("wf_dead", "step_1").catch(() => []);
  }
  assert.deepEqual(events.at(-1)?.data.status, "failure");
  const next = await call(chat.base, "/chat", { message: "again", workflow_id: "wf_dead" });
  assert.equal(next.status, 200, "the workflow is free again");
});
