import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import { createLogger } from "@atrium/kit";
import {
  createTestPostgres,
  eventually,
  needsServer,
  type ReceivedWebhook,
  startWebhookReceiver,
} from "@atrium/kit/testing";
import { createFileRunStore } from "../runs/file-run-store.js";
import type { RunStore } from "../runs/run-store.js";
import { createSqlRunStore } from "../runs/sql-run-store.js";
import { migrateChat } from "../trace/sql-trace-store.js";
import { createFileWebhookOutbox } from "./file-webhook-outbox.js";
import { withStepEvents } from "./run-events.js";
import { createSqlWebhookOutbox } from "./sql-webhook-outbox.js";
import { createStepWebhookWorker, type StepWebhookSettings } from "./step-webhook-worker.js";
import type { WebhookOutbox } from "./webhook-outbox.js";

const secretKey = Buffer.alloc(32, 7);
const logger = createLogger({ name: "chat-webhooks", level: "silent" });
const request = { message: "hi", agent_id: "chat", system_prompt: "", context: {} };

/** A host's view of one durable store: a fresh outbox and run store over the same data. */
type OpenHost = () => { runs: RunStore; outbox: WebhookOutbox };

const backends: [string, (t: TestContext) => Promise<OpenHost | undefined>][] = [
  [
    "files",
    async (t) => {
      const dir = await mkdtemp(join(tmpdir(), "chat-webhooks-"));
      t.after(() => rm(dir, { recursive: true, force: true }));
      return () => ({
        runs: createFileRunStore(join(dir, ".runs")),
        outbox: createFileWebhookOutbox(join(dir, ".webhooks")),
      });
    },
  ],
  [
    "PostgreSQL",
    async (t) => {
      if (!(await needsServer(t, "postgres"))) return undefined;
      const db = await createTestPostgres();
      t.after(() => db.drop());
      await migrateChat(db.sql);
      return () => ({ runs: createSqlRunStore(db.sql), outbox: createSqlWebhookOutbox(db.sql) });
    },
  ],
];

const settings = (url: string): StepWebhookSettings => ({
  url,
  key: secretKey,
  pollMs: 60_000,
  timeoutMs: 2_000,
  retryBaseMs: 1,
  retryWindowMs: 60_000,
});

const workerOf = (outbox: WebhookOutbox, url: string, instanceId: string) =>
  createStepWebhookWorker({ outbox, settings: settings(url), instanceId, logger });

/** Verifies the Standard Webhooks signature independently of kit's signing, and reads the body. */
function verified(hit: ReceivedWebhook): { type: string; data: Record<string, unknown> } {
  const expected = createHmac("sha256", secretKey)
    .update(`${hit.id}.${hit.timestamp}.${hit.body}`)
    .digest("base64");
  assert.equal(hit.signature, `v1,${expected}`, "signed with the configured secret");
  assert.ok(Math.abs(Number(hit.timestamp) - Date.now() / 1000) < 60, "a current timestamp");
  return JSON.parse(hit.body);
}

async function endedRun(
  runs: RunStore,
  stepId: string,
  status: "completed" | "yielded",
): Promise<void> {
  const created = await runs.create({
    workflowId: "wf_hooks",
    stepId,
    request,
    status: "running",
    owner: "h1",
    leaseMs: 60_000,
  });
  assert.ok("created" in created);
  const answer = status === "completed" ? "done" : "needs approval";
  assert.ok(
    await runs.finish("wf_hooks", stepId, "h1", {
      status,
      response: {
        status: status === "completed" ? "success" : "yield",
        answer,
        sources: [],
        tokens: {},
      },
      checkpoint: status === "yielded" ? { at: 1 } : undefined,
    }),
  );
}

for (const [name, open] of backends) {
  test(`${name}: one signed event per outcome, with the run's ids`, async (t) => {
    const openHost = await open(t);
    if (!openHost) return;
    const receiver = await startWebhookReceiver();
    t.after(() => receiver.close());
    const { runs, outbox } = openHost();
    const store = withStepEvents(runs, outbox, (error) => assert.fail(String(error)));
    await endedRun(store, "s_done", "completed");
    await endedRun(store, "s_wait", "yielded");
    const cancelled = await store.cancel("wf_hooks", "s_wait", "the user gave up");
    assert.equal(cancelled?.changed, true);

    const worker = workerOf(outbox, receiver.url, "host-a");
    assert.deepEqual(await worker.runOnce(), { claimed: 3, delivered: 3, retrying: 0, failed: 0 });
    assert.deepEqual(await worker.runOnce(), { claimed: 0, delivered: 0, retrying: 0, failed: 0 });

    const events = receiver.received.map(verified);
    const byType = (type: string) => events.filter((e) => e.type === type);
    assert.equal(events.length, 3);
    assert.equal(new Set(receiver.received.map((hit) => hit.id)).size, 3, "distinct webhook-ids");
    const [completed] = byType("chat.step.completed");
    assert.equal(byType("chat.step.completed").length, 1);
    assert.deepEqual(
      [completed?.data.workflow_id, completed?.data.step_id, completed?.data.status],
      ["wf_hooks", "s_done", "completed"],
    );
    assert.equal(completed?.data.answer, "done");
    const [yielded] = byType("chat.step.yielded");
    assert.deepEqual(
      [yielded?.data.step_id, yielded?.data.status, yielded?.data.pauses],
      ["s_wait", "yielded", 1],
    );
    const [failed] = byType("chat.step.failed");
    assert.deepEqual(
      [failed?.data.step_id, failed?.data.status, failed?.data.reason],
      ["s_wait", "cancelled", "the user gave up"],
    );
  });

  test(`${name}: no event for a transition that did not happen`, async (t) => {
    const openHost = await open(t);
    if (!openHost) return;
    const { runs, outbox } = openHost();
    const store = withStepEvents(runs, outbox, assert.fail);
    const created = await store.create({
      workflowId: "wf_hooks",
      stepId: "s_kept",
      request,
      status: "running",
      owner: "h1",
      leaseMs: 60_000,
    });
    assert.ok("created" in created);
    const answer = { status: "success" as const, answer: "x", sources: [], tokens: {} };
    assert.equal(
      await store.finish("wf_hooks", "s_kept", "h2", { status: "completed", response: answer }),
      false,
      "not h2's run",
    );
    assert.equal((await store.cancel("wf_hooks", "s_kept", "stop"))?.changed, false);
    assert.deepEqual(await store.expire(), [], "the lease holds");
    assert.deepEqual(await outbox.claim("host-a", 60_000, 10), []);
  });

  test(`${name}: a crash while recording an event loses neither the event nor invents one`, async (t) => {
    const openHost = await open(t);
    if (!openHost) return;
    const hostA = openHost();
    const crash = async () => {
      throw new Error("host killed between the transition and its event");
    };
    const crashing: WebhookOutbox = {
      ...hostA.outbox,
      add: crash,
      ...(hostA.outbox.addWithin ? { addWithin: crash } : {}),
    };
    const errors: unknown[] = [];
    const storeA = withStepEvents(hostA.runs, crashing, (error) => errors.push(error));
    let finished: boolean | undefined;
    try {
      await endedRun(storeA, "s_crash", "completed");
      finished = true;
    } catch {
      finished = false;
    }
    const stored = await hostA.runs.get("wf_hooks", "s_crash");
    const claimed = await hostA.outbox.claim("host-a", 60_000, 10);
    if (hostA.outbox.addWithin) {
      // One transaction: the transition was rolled back with the event.
      assert.equal(finished, false);
      assert.equal(stored?.status, "running", "no transition without its event");
      assert.deepEqual(claimed, [], "no event without its transition");
      return;
    }
    // One file write: the transition is kept with its event in the run's file.
    assert.equal(finished, true);
    assert.equal(stored?.status, "completed");
    assert.deepEqual(claimed, [], "the outbox did not get it before the crash");
    assert.equal(errors.length, 1, "reported");
    assert.equal("outbox_events" in (stored ?? {}), false, "not part of the run's record");

    const receiver = await startWebhookReceiver();
    t.after(() => receiver.close());
    // The next host reads the run files and hands the event over, once however often it looks.
    const hostB = openHost();
    const storeB = withStepEvents(hostB.runs, hostB.outbox, assert.fail);
    await storeB.expire();
    const worker = workerOf(hostB.outbox, receiver.url, "host-b");
    assert.deepEqual(await worker.runOnce(), { claimed: 1, delivered: 1, retrying: 0, failed: 0 });
    await storeB.expire();
    const hostC = openHost();
    await withStepEvents(hostC.runs, hostC.outbox, assert.fail).expire();
    assert.equal((await worker.runOnce()).claimed, 0, "delivered once, not handed over again");
    const event = verified(receiver.received[0] as ReceivedWebhook);
    assert.deepEqual(
      [receiver.received.length, event.type, event.data.step_id],
      [1, "chat.step.completed", "s_crash"],
    );
  });

  test(`${name}: a failed attempt is retried under the same webhook-id`, async (t) => {
    const openHost = await open(t);
    if (!openHost) return;
    const receiver = await startWebhookReceiver((index) => (index === 0 ? 503 : 204));
    t.after(() => receiver.close());
    const { runs, outbox } = openHost();
    await endedRun(withStepEvents(runs, outbox, assert.fail), "s_retry", "completed");
    const worker = workerOf(outbox, receiver.url, "host-a");
    assert.equal((await worker.runOnce()).retrying, 1);
    await eventually("the retry is due and delivered", async () => {
      await worker.runOnce();
      return receiver.received.length === 2;
    });
    assert.equal(receiver.received[0]?.id, receiver.received[1]?.id);
    assert.equal((await worker.runOnce()).claimed, 0, "delivered once, not again");
  });

  test(`${name}: the outbox survives its host; another host delivers the event once`, async (t) => {
    const openHost = await open(t);
    if (!openHost) return;
    // Host A's receiver never answers: A stops mid-delivery, as a host being shut down.
    const receiver = await startWebhookReceiver(() => "hang");
    t.after(() => receiver.close());
    const hostA = openHost();
    await endedRun(withStepEvents(hostA.runs, hostA.outbox, assert.fail), "s_moved", "completed");
    const workerA = workerOf(hostA.outbox, receiver.url, "host-a");
    const passA = workerA.runOnce();
    await eventually("host A is sending", () => receiver.received.length === 1);
    await workerA.stop();
    assert.equal((await passA).delivered, 0, "A's attempt was cut, not counted");

    receiver.answer = () => 204;
    const hostB = openHost();
    const workerB = workerOf(hostB.outbox, receiver.url, "host-b");
    assert.deepEqual(await workerB.runOnce(), { claimed: 1, delivered: 1, retrying: 0, failed: 0 });
    assert.equal((await workerB.runOnce()).claimed, 0);
    assert.equal(receiver.received.length, 2, "A's cut attempt and B's delivery");
    assert.equal(receiver.received[0]?.id, receiver.received[1]?.id, "one event, one webhook-id");
    const event = verified(receiver.received[1] as ReceivedWebhook);
    assert.deepEqual(
      [event.type, event.data.workflow_id, event.data.step_id],
      ["chat.step.completed", "wf_hooks", "s_moved"],
    );
  });
}
