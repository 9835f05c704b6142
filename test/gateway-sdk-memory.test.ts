import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { createLogger, type RunningService } from "@atrium/kit";
import { eventually } from "@atrium/kit/testing";
import { startMemoryService } from "@atrium/memory";
import { AtriumHttpError, createMemoryClient, type EventType } from "@atrium/sdk";

/** The SDK's memory client against the real memory service (embedded stores), over REST. */
let service: RunningService;
let dataDir: string;

before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "sdk-memory-"));
  service = await startMemoryService({
    env: {
      MEMORY_HOST: "127.0.0.1",
      MEMORY_REST_PORT: "0",
      MEMORY_GRPC_PORT: "0",
      ATRIUM_DATA_DIR: dataDir,
      MEMORY_PROMOTER_INTERVAL: "0s",
    },
    logger: createLogger({ name: "memory", level: "silent" }),
  });
});

after(async () => {
  await service?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

test("every implemented memory route through the SDK, with the service's own errors", async () => {
  const memory = createMemoryClient({ baseUrl: service.urls.rest });
  const session = await memory.createSession({
    tenant_id: "acme",
    user_id: "u-1",
    agent_id: "helper",
  });
  assert.ok(session.session_id);
  assert.ok(Date.parse(session.created_at));

  const stored = await memory.storeInteraction(session.session_id, {
    user_message: "I moved to Lyon last spring",
    agent_response: "Noted, Lyon it is.",
  });
  assert.equal(stored.success, true);
  const event = await memory.storeEvent(session.session_id, {
    type: "thought",
    role: "agent",
    content: "the user lives in France",
    metadata: { workflow_id: "wf-1" },
  });
  assert.equal(event.success, true);

  const context = await memory.getContext(session.session_id, { limit: 10 });
  assert.deepEqual(
    context.stm_events.map((e) => [e.role, e.type]),
    [
      ["user", "message"],
      ["agent", "message"],
      ["agent", "thought"],
    ],
  );
  // The stored turn is found by other words than it was written with.
  await eventually("a search finds the move to Lyon", async () => {
    const hits = await memory.search(session.session_id, {
      query: "which city did the user move to",
    });
    return hits.some((hit) => hit.content.includes("Lyon"));
  });
  assert.ok(["healthy", "degraded"].includes((await memory.health()).status));
  assert.equal(typeof (await memory.triggerGraphAnalytics()).success, "boolean");

  await assert.rejects(memory.getContext("no-such-session"), (error: unknown) => {
    assert.ok(error instanceof AtriumHttpError);
    assert.equal(error.status, 404);
    return true;
  });
  await assert.rejects(
    memory.storeEvent(session.session_id, { type: "gossip" as EventType }),
    (error: unknown) => error instanceof AtriumHttpError && error.status === 400,
  );
});

test("a write retried with the SDK's idempotencyKey answers alike and stores once", async () => {
  const memory = createMemoryClient({ baseUrl: service.urls.rest });
  const { session_id } = await memory.createSession({ tenant_id: "acme", user_id: "u-2" });
  const input = { type: "observation" as const, role: "system" as const, content: "retried" };
  const first = await memory.storeEvent(session_id, input, { idempotencyKey: "sdk-1" });
  const again = await memory.storeEvent(session_id, input, { idempotencyKey: "sdk-1" });
  assert.equal(again.event_id, first.event_id);
  await memory.storeInteraction(session_id, { user_message: "hi" }, { idempotencyKey: "sdk-2" });
  await memory.storeInteraction(session_id, { user_message: "hi" }, { idempotencyKey: "sdk-2" });
  const context = await memory.getContext(session_id, { limit: 10 });
  assert.deepEqual(
    context.stm_events.map((e) => e.content),
    ["retried", "hi"],
  );
});
