import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { createPgliteSql, type Sql } from "@atrium/kit";
import type { Scope } from "../domain.js";
import { createEventStore, type NewEvent } from "./events.js";
import { migrateMemory } from "./migrate.js";
import { createSessionStore } from "./sessions.js";

let sql: Sql;
before(async () => {
  sql = await createPgliteSql();
  await migrateMemory(sql);
});
after(() => sql.close());

async function turn(scope: Scope, user: string, agent: string): Promise<NewEvent[]> {
  const session = await createSessionStore(sql).create(scope, {});
  const at = new Date("2026-05-01T09:00:00Z");
  return [
    { role: "user", content: user },
    { role: "agent", content: agent },
  ].map(({ role, content }) => ({
    sessionId: session.id,
    scope,
    role: role as "user" | "agent",
    type: "message",
    content,
    metadata: {},
    timestamp: at,
  }));
}

test("concurrent turns share INSERTs, yet each gets and keeps exactly its own events", async () => {
  const events = createEventStore(sql);
  const scopes = Array.from({ length: 20 }, (_, i) => ({
    tenantId: "t",
    userId: `g${i}`,
    agentId: "",
  }));
  const turns = await Promise.all(scopes.map((s, i) => turn(s, `question ${i}`, `answer ${i}`)));
  const stored = await Promise.all(turns.map((t) => events.insertAll(t)));
  stored.forEach((pair, i) => {
    assert.deepEqual(
      pair.map((p) => p.event.content),
      [`question ${i}`, `answer ${i}`],
    );
  });
  for (const [i, scope] of scopes.entries()) {
    const newest = await events.newest(scope, 10);
    assert.deepEqual(
      newest.map((e) => e.content),
      [`answer ${i}`, `question ${i}`],
    );
  }
});

test("a turn the database refuses fails alone and leaves nothing half-written", async () => {
  const events = createEventStore(sql);
  const good = { tenantId: "t", userId: "good", agentId: "" };
  const bad = { tenantId: "t", userId: "bad", agentId: "" };
  const [goodTurn, badTurn] = await Promise.all([
    turn(good, "fine", "fine too"),
    turn(bad, "fine", "a NUL \u0000 is not valid text"),
  ]);
  const [ok, refused] = await Promise.allSettled([
    events.insertAll(goodTurn),
    events.insertAll(badTurn),
  ]);
  assert.equal(ok.status, "fulfilled");
  assert.equal(refused.status, "rejected");
  assert.equal((await events.newest(good, 10)).length, 2);
  assert.deepEqual(await events.newest(bad, 10), []);
});

test("an event as the insert returns it is the event as it is read back", async () => {
  const events = createEventStore(sql);
  const scope = { tenantId: "t", userId: "round-trip", agentId: "a" };
  const [question] = await turn(scope, "question", "answer");
  const withEverything: NewEvent = {
    ...(question as NewEvent),
    type: "observation",
    metadata: { origin_service: "crawler", b: "2", a: "1" },
    blobUri: "file://blobs/t/s/1",
    blobMimeType: "image/png",
    timestamp: new Date("2026-05-01T09:00:00.123Z"),
  };
  const [inserted] = await events.insertAll([withEverything]);
  const [read] = await events.newest(scope, 1);
  assert.deepEqual(inserted?.event, read);
});
