import assert from "node:assert/strict";
import { type TestContext, test } from "node:test";
import type { Sql } from "@atrium/kit";
import { createTestPostgres, needsServer } from "@atrium/kit/testing";
import { createSqlTraceStore, migrateChat, type SqlTraceStore } from "./sql-trace-store.js";
import type { TraceEvent } from "./trace-event.js";
import { TraceHistoryError } from "./trace-store.js";

const event = (workflow_id: string, step_id: string, seq: number): TraceEvent => ({
  workflow_id,
  step_id,
  seq,
  type: "thinking",
  data: { n: seq },
  timestamp: new Date().toISOString(),
});

/** Two stores on one migrated database, as two agent hosts sharing PostgreSQL. */
async function twoHosts(t: TestContext): Promise<[SqlTraceStore, SqlTraceStore] | undefined> {
  if (!(await needsServer(t, "postgres"))) return undefined;
  const db = await createTestPostgres();
  t.after(() => db.drop());
  await migrateChat(db.sql);
  const stores = [0, 1].map(() =>
    createSqlTraceStore({ sql: db.sql, retentionSeconds: 86_400 }),
  ) as [SqlTraceStore, SqlTraceStore];
  t.after(() => Promise.all(stores.map((s) => s.close())));
  return stores;
}

test("a step written by one host reads back on the other, in order, as written", async (t) => {
  const hosts = await twoHosts(t);
  if (!hosts) return;
  const [a, b] = hosts;
  // Appended without awaiting each: the group commit batches them and must keep their order.
  const written = Array.from({ length: 50 }, (_, i) => event("wf_a", "step_1", i + 1));
  await Promise.all(written.map((e) => a.append(e)));
  assert.deepEqual(await b.read("wf_a", "step_1"), written);

  const json = '{"workflow_id":"wf_a","step_id":"step_2","type":"error","data":{},"seq":51}';
  await a.append(JSON.parse(json), json);
  assert.deepEqual(await b.read("wf_a", "step_2"), [JSON.parse(json)]);
});

test("an unknown step is not_found and a bad id invalid_id, on read and append", async (t) => {
  const hosts = await twoHosts(t);
  if (!hosts) return;
  const [a] = hosts;
  await assert.rejects(
    a.read("wf_none", "step_1"),
    (e) => e instanceof TraceHistoryError && e.failure === "not_found",
  );
  await assert.rejects(
    a.read("wf_a", "../x"),
    (e) => e instanceof TraceHistoryError && e.failure === "invalid_id",
  );
  await assert.rejects(
    a.append(event("wf a", "step_1", 1)),
    (e) => e instanceof TraceHistoryError && e.failure === "invalid_id",
  );
  assert.deepEqual(await a.workflows(10), []);
});

test("the workflow list is the same on every host, most recently written first", async (t) => {
  const hosts = await twoHosts(t);
  if (!hosts) return;
  const [a, b] = hosts;
  await a.append(event("wf_first", "step_1", 1));
  await b.append(event("wf_second", "step_1", 1));
  await b.append(event("wf_first", "step_2", 2));

  const listed = await a.workflows(10);
  assert.deepEqual(await b.workflows(10), listed);
  assert.deepEqual(
    listed.map((w) => [w.workflow_id, w.steps.map((s) => s.step_id)]),
    [
      ["wf_first", ["step_2", "step_1"]],
      ["wf_second", ["step_1"]],
    ],
  );
  assert.equal(listed[0].updated_at, listed[0].steps[0].updated_at);
  assert.deepEqual(
    (await a.workflows(1)).map((w) => w.workflow_id),
    ["wf_first"],
  );
});

test("the sweep deletes steps past retention with their events, and workflows left empty", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const db = await createTestPostgres();
  t.after(() => db.drop());
  await migrateChat(db.sql);
  const store = createSqlTraceStore({ sql: db.sql, retentionSeconds: 86_400 });
  t.after(() => store.close());
  await store.append(event("wf_old", "step_1", 1));
  await store.append(event("wf_mixed", "step_old", 1));
  await store.append(event("wf_mixed", "step_new", 2));
  await db.sql.query(
    "UPDATE chat_trace_steps SET updated_at = now() - interval '2 days' WHERE step_id IN ('step_1', 'step_old')",
  );
  await db.sql.query(
    "UPDATE chat_trace_workflows SET updated_at = now() - interval '2 days' WHERE workflow_id = 'wf_old'",
  );

  assert.equal(await store.sweep(), 2);
  assert.deepEqual(
    (await store.workflows(10)).map((w) => [w.workflow_id, w.steps.map((s) => s.step_id)]),
    [["wf_mixed", ["step_new"]]],
  );
  await assert.rejects(store.read("wf_mixed", "step_old"), /no trace/);
  assert.equal((await store.read("wf_mixed", "step_new")).length, 1);
  const { rows } = await db.sql.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM chat_trace_events",
  );
  assert.equal(rows[0].n, 1);
});

test("a step's last write is recorded at most once a second per host, its first event always", async (t) => {
  const hosts = await twoHosts(t);
  if (!hosts) return;
  const [a] = hosts;
  const updatedAt = async () => (await a.workflows(1))[0].steps[0].updated_at;
  await a.append(event("wf_t", "step_1", 1));
  const first = await updatedAt();
  await a.append(event("wf_t", "step_1", 2));
  assert.equal(await updatedAt(), first);
  await new Promise((r) => setTimeout(r, 1100));
  await a.append(event("wf_t", "step_1", 3));
  assert.ok((await updatedAt()) > first);
  assert.deepEqual(
    (await a.read("wf_t", "step_1")).map((e) => e.seq),
    [1, 2, 3],
  );
});

test("events of a busy host go in one INSERT per writeIntervalMs, in order, each acknowledged once stored", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const db = await createTestPostgres();
  t.after(() => db.drop());
  await migrateChat(db.sql);
  let inserts = 0;
  const counting: Sql = Object.create(db.sql, {
    query: {
      value: (text: string, params?: unknown[]) => {
        if (text.includes("INSERT INTO chat_trace_events")) inserts++;
        return db.sql.query(text, params);
      },
    },
  });
  const store = createSqlTraceStore({
    sql: counting,
    retentionSeconds: 86_400,
    writeIntervalMs: 100,
  });
  t.after(() => store.close());
  // 40 events 5 ms apart, as a busy host's steps emit them: 200 ms of events.
  const written = Array.from({ length: 40 }, (_, i) => event("wf_busy", "step_1", i + 1));
  const acknowledged: Promise<void>[] = [];
  for (const e of written) {
    acknowledged.push(
      store.append(e).then(async () => {
        const stored = await db.sql.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM chat_trace_events WHERE seq = $1",
          [e.seq],
        );
        assert.equal(stored.rows[0].n, 1, `event ${e.seq} acknowledged before it was stored`);
      }),
    );
    await new Promise((r) => setTimeout(r, 5));
  }
  await Promise.all(acknowledged);
  assert.ok(inserts >= 2 && inserts <= 4, `${inserts} INSERTs for 40 events over 200 ms`);
  assert.deepEqual(await store.read("wf_busy", "step_1"), written);
});
