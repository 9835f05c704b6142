import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { createLogger } from "@atrium/kit";
import { eventually, type ReceivedWebhook, startWebhookReceiver } from "@atrium/kit/testing";
import { startAgentService } from "../service/start-chat-service.js";

const key = Buffer.alloc(32, 9);
const secret = `whsec_${key.toString("base64")}`;

interface StepEventBody {
  type: string;
  data: { workflow_id: string; step_id: string; status: string; pauses: number };
}

function verified(hit: ReceivedWebhook): StepEventBody {
  const mac = createHmac("sha256", key)
    .update(`${hit.id}.${hit.timestamp}.${hit.body}`)
    .digest("base64");
  assert.equal(hit.signature, `v1,${mac}`, "signed with CHAT_WEBHOOK_SECRET");
  return JSON.parse(hit.body);
}

async function startHost(t: TestContext, dir: string, env: Record<string, string>) {
  // Approved messages go to a communicator endpoint of their own, not to the chat webhook.
  const communicator = await startWebhookReceiver();
  t.after(() => communicator.close());
  const service = await startAgentService({
    env: {
      AGENT_PORT: "0",
      AGENT_HOST: "127.0.0.1",
      TRACES_DIR: dir,
      COMMUNICATOR_WEBHOOK_URL: communicator.url,
      CHAT_WEBHOOK_SECRET: secret,
      ...env,
    },
    logger: createLogger({ name: "agent", level: "silent" }),
  });
  return { service, base: `${service.urls.rest}/api/v1` };
}

async function post(url: string, body: unknown): Promise<{ status: number; body: never }> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as never };
}

const needsApproval = "send a message to the team: the release is out";

test("a background step's pause, completion and denial each reach CHAT_WEBHOOK_URL once, signed", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "chat-webhook-host-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const receiver = await startWebhookReceiver();
  t.after(() => receiver.close());
  const { service, base } = await startHost(t, dir, {
    CHAT_WEBHOOK_URL: receiver.url,
    CHAT_WEBHOOK_POLL_INTERVAL: "50ms",
  });
  t.after(() => service.stop());

  const started = await post(`${base}/chat/runs`, {
    message: needsApproval,
    workflow_id: "wf_hook_host1",
  });
  assert.equal(started.status, 202);
  const { workflow_id: workflowId, step_id: stepId } = started.body as {
    workflow_id: string;
    step_id: string;
  };
  await eventually("the yield is delivered", () => receiver.received.length === 1);
  const yielded = verified(receiver.received[0] as ReceivedWebhook);
  assert.deepEqual(
    [yielded.type, yielded.data.workflow_id, yielded.data.step_id, yielded.data.pauses],
    ["chat.step.yielded", workflowId, stepId, 1],
  );

  const resumed = await post(`${base}/chat/runs/${workflowId}/${stepId}/resume`, {
    approval: "approve",
    pause: 1,
  });
  assert.equal(resumed.status, 200);
  await eventually("the completion is delivered", () => receiver.received.length === 2);
  const completed = verified(receiver.received[1] as ReceivedWebhook);
  assert.deepEqual(
    [completed.type, completed.data.step_id, completed.data.status],
    ["chat.step.completed", stepId, "completed"],
  );

  const second = await post(`${base}/chat`, {
    message: needsApproval,
    workflow_id: "wf_hook_host2",
  });
  const secondStep = (second.body as { step_id: string }).step_id;
  const denied = await post(`${base}/chat/runs/wf_hook_host2/${secondStep}/resume`, {
    approval: "deny",
  });
  assert.equal(denied.status, 200);
  await eventually("the denial is delivered", () => receiver.received.length === 4);
  // Sent in one pass when both were due together, so in either order.
  const types = receiver.received.slice(2).map((hit) => verified(hit));
  assert.deepEqual(types.map((e) => [e.type, e.data.step_id]).sort(), [
    ["chat.step.failed", secondStep],
    ["chat.step.yielded", secondStep],
  ]);
  // Several more passes: nothing is sent twice.
  await sleep(300);
  assert.equal(receiver.received.length, 4);
  assert.equal(new Set(receiver.received.map((hit) => hit.id)).size, 4);
});

test("an event a host recorded but did not send is sent once by the next host", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "chat-webhook-restart-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const receiver = await startWebhookReceiver();
  t.after(() => receiver.close());
  // Host A looks for due events only once an hour: it stops with the yield still in its outbox.
  const a = await startHost(t, dir, {
    CHAT_WEBHOOK_URL: receiver.url,
    CHAT_WEBHOOK_POLL_INTERVAL: "1h",
  });
  const answer = await post(`${a.base}/chat`, {
    message: needsApproval,
    workflow_id: "wf_hook_moved",
  });
  const stepId = (answer.body as { step_id: string; status: string }).step_id;
  assert.equal((answer.body as { status: string }).status, "yield");
  await a.service.stop();
  assert.equal(receiver.received.length, 0, "host A stopped before delivering");

  const b = await startHost(t, dir, {
    CHAT_WEBHOOK_URL: receiver.url,
    CHAT_WEBHOOK_POLL_INTERVAL: "50ms",
  });
  t.after(() => b.service.stop());
  await eventually("host B delivers it", () => receiver.received.length === 1);
  await sleep(300);
  assert.equal(receiver.received.length, 1, "once");
  const event = verified(receiver.received[0] as ReceivedWebhook);
  assert.deepEqual(
    [event.type, event.data.workflow_id, event.data.step_id],
    ["chat.step.yielded", "wf_hook_moved", stepId],
  );
});
