// Issue 32's goal: a background run's webhook is delivered once with a valid signature, also
// when the host running the step is killed with -9 mid-step: another host of the database marks
// the run failed once its lease lapses, and the event recorded with that transition is sent.
import assert from "node:assert/strict";
import { once } from "node:events";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { generateWebhookSecret } from "@atrium/kit";
import { eventually, needsServer, startWebhookReceiver } from "@atrium/kit/testing";
import { verifyWebhook } from "@atrium/sdk";
import { sharedDatabase, startChatHostProcess, startChatHosts } from "./chat-hosts-harness.js";

const call = async (base: string, path: string, body?: unknown) => {
  const res = await fetch(`${base}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

test("a background run's webhook arrives once, signed, after its host is killed with -9 mid-step", async (t) => {
  if (!(await needsServer(t, "postgres")) || !(await needsServer(t, "redis"))) return;
  const receiver = await startWebhookReceiver(() => 204);
  t.after(() => receiver.close());
  const secret = generateWebhookSecret();
  const env = {
    CHAT_WEBHOOK_URL: receiver.url,
    CHAT_WEBHOOK_SECRET: secret,
    CHAT_WEBHOOK_POLL_INTERVAL: "100ms",
    // The coder runs the message's code block; this one loops until the sandbox limit.
    SANDBOX_TIMEOUT: "120s",
  };
  const databaseUrl = await sharedDatabase(t);
  const doomed = await startChatHostProcess(t, "doomed", databaseUrl, env);
  const [survivor] = await startChatHosts(t, { names: ["survivor"], env, databaseUrl });

  const workflowId = `killed_${process.pid}_${Date.now()}`;
  const started = await call(doomed.base, "/chat/runs", {
    message: "Run this: ```js\nfor (;;) {}\n```",
    workflow_id: workflowId,
  });
  assert.equal(started.status, 202, JSON.stringify(started.body));
  const stepId = String(started.body.step_id);
  const run = `/chat/runs/${workflowId}/${stepId}`;
  await eventually("the step is mid-way (its sandbox runs the loop)", async () => {
    const history = await call(survivor.base, `/chat/history/${workflowId}/${stepId}`);
    const events = (history.body.events ?? []) as { type: string }[];
    return history.status === 200 && events.some((e) => e.type === "tool_start");
  });
  const running = await call(survivor.base, run);
  assert.equal(running.body.status, "running");

  doomed.child.kill("SIGKILL");
  await once(doomed.child, "exit");
  assert.equal(receiver.received.length, 0, "nothing was sent before the host died");

  // The lease (30 s) lapses without heartbeats; the survivor fails the run and sends its event.
  await eventually(
    "the survivor marks the run failed",
    async () => (await call(survivor.base, run)).body.status === "failed",
    90_000,
  );
  const failed = await call(survivor.base, run);
  assert.match(String(failed.body.reason), /stopped renewing its lease/);
  assert.equal(failed.body.host, running.body.host, "failed as the dead host's run");
  await eventually("the event arrives", () => receiver.received.length > 0, 30_000);
  // Several more polls of the survivor's worker: nothing is sent again.
  await sleep(1_000);
  assert.equal(receiver.received.length, 1, "delivered once");

  const [hit] = receiver.received;
  const event = await verifyWebhook(
    secret,
    {
      "webhook-id": hit.id,
      "webhook-timestamp": hit.timestamp,
      "webhook-signature": hit.signature,
    },
    hit.body,
  );
  assert.equal(event.type, "chat.step.failed");
  const data = event.data as Record<string, unknown>;
  assert.deepEqual([data.workflow_id, data.step_id, data.status], [workflowId, stepId, "failed"]);
  assert.match(String(data.reason), /stopped renewing its lease/);
  await assert.rejects(
    verifyWebhook(
      generateWebhookSecret(),
      {
        "webhook-id": hit.id,
        "webhook-timestamp": hit.timestamp,
        "webhook-signature": hit.signature,
      },
      hit.body,
    ),
    "another secret does not verify it",
  );
});
