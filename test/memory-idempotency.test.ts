import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { memoryV1 } from "@atrium/api";
import { createLogger, type RunningService } from "@atrium/kit";
import { createTestPostgres, needsServer, type TestPostgres } from "@atrium/kit/testing";
import { startMemoryService } from "@atrium/memory";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";

/**
 * Two instances on one database: a write retried with the same Idempotency-Key, on either
 * instance and either transport, even concurrently, returns the first response and is stored once.
 */
let pg: TestPostgres | undefined;
const instances: RunningService[] = [];
const dataDir = mkdtempSync(join(tmpdir(), "atrium-idem-"));

before(async () => {
  pg = await createTestPostgres().catch(() => undefined);
  if (!pg) return;
  for (let i = 0; i < 2; i++) {
    instances.push(
      await startMemoryService({
        logger: createLogger({ name: "memory", level: "silent" }),
        env: {
          DATABASE_URL: pg.url,
          ATRIUM_DATA_DIR: dataDir,
          MEMORY_HOST: "127.0.0.1",
          MEMORY_REST_PORT: "0",
          MEMORY_GRPC_PORT: "0",
          MEMORY_PROMOTER_INTERVAL: "1h",
        },
      }),
    );
  }
});

after(async () => {
  await Promise.all(instances.map((i) => i.stop()));
  await pg?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

const post = (base: string, path: string, body: unknown, key?: string) =>
  fetch(`${base}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(key ? { "idempotency-key": key } : {}) },
    body: JSON.stringify(body),
  });

const grpc = (i: number) =>
  createClient(
    memoryV1.MemoryService,
    createGrpcTransport({ baseUrl: instances[i].urls.grpc ?? "" }),
  );

async function count(content: string): Promise<number> {
  const { rows } = await pg!.sql.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM memory_events WHERE content = $1",
    [content],
  );
  return rows[0].n;
}

test("retries with one key store once and answer alike, across instances and transports", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const [a, b] = instances.map((i) => i.urls.rest);
  const session = (await (
    await post(a, "/api/v1/sessions", { tenant_id: "idem", user_id: "u" })
  ).json()) as { session_id: string };
  const sessionId = session.session_id;
  const path = `/api/v1/sessions/${sessionId}`;

  const turn = { user_message: "retried turn", agent_response: "once" };
  const answers = await Promise.all([
    ...[a, b, a, b].map((base) => post(base, `${path}/interactions`, turn, "key-1")),
  ]);
  const grpcAnswer = await grpc(1).storeInteraction(
    { sessionId, userMessage: "retried turn", agentResponse: "once" },
    { headers: { "idempotency-key": "key-1" } },
  );
  for (const answer of answers) {
    assert.equal(answer.status, 200);
    assert.deepEqual(await answer.json(), { success: true, interaction_id: "" });
  }
  assert.equal(grpcAnswer.success, true);
  assert.equal(await count("retried turn"), 1);
  assert.equal(await count("once"), 1);

  const event = { type: "thought", role: "agent", content: "retried event" };
  const eventAnswers = await Promise.all(
    [b, a, b].map((base) => post(base, `${path}/events`, event, "key-2")),
  );
  const eventIds = await Promise.all(
    eventAnswers.map(async (r) => ((await r.json()) as { event_id: string }).event_id),
  );
  const viaGrpc = await grpc(0).storeEvent(
    { sessionId, type: "thought", role: "agent", content: "retried event" },
    { headers: { "idempotency-key": "key-2" } },
  );
  assert.equal(new Set([...eventIds, viaGrpc.eventId]).size, 1, "one event id for every retry");
  assert.equal(await count("retried event"), 1);

  // The key is per operation; without a key every call stores.
  assert.equal(
    (await post(a, `${path}/events`, { ...event, content: "k1 event" }, "key-1")).status,
    200,
  );
  assert.equal(await count("k1 event"), 1);
  await post(a, `${path}/interactions`, { user_message: "no key" });
  await post(b, `${path}/interactions`, { user_message: "no key" });
  assert.equal(await count("no key"), 2);

  const context = (await (await fetch(`${b}${path}/context?limit=20`)).json()) as {
    stm_events: { content: string }[];
  };
  assert.equal(context.stm_events.filter((e) => e.content === "retried turn").length, 1);
});

test("an empty or overlong key is refused", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const a = instances[0].urls.rest;
  const session = (await (
    await post(a, "/api/v1/sessions", { tenant_id: "idem", user_id: "u" })
  ).json()) as { session_id: string };
  for (const key of [" ", "k".repeat(256)]) {
    const res = await post(
      a,
      `/api/v1/sessions/${session.session_id}/interactions`,
      { user_message: "x" },
      key,
    );
    assert.equal(res.status, 400, JSON.stringify(key));
  }
});
