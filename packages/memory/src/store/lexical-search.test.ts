import assert from "node:assert/strict";
import { copyFile, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { createPgliteSql, runMigrations, type Sql } from "@atrium/kit";
import { createTestPostgres, needsServer } from "@atrium/kit/testing";
import type { Scope } from "../domain.js";
import { createEventStore } from "./events.js";
import { createLexicalSearch } from "./lexical-search.js";
import { migrateMemory, migrationsDir } from "./migrate.js";
import { createSessionStore } from "./sessions.js";

const alice: Scope = { tenantId: "t1", userId: "alice", agentId: "a1" };

/** Stores messages of a scope, in order, as waiting for their chain check. */
async function store(sql: Sql, scope: Scope, texts: string[], metadata = {}) {
  const events = createEventStore(sql);
  const session = await createSessionStore(sql).create(scope, {});
  const stored = await events.insertAll(
    texts.map((content, i) => ({
      sessionId: session.id,
      scope,
      role: i % 2 ? ("agent" as const) : ("user" as const),
      type: "message" as const,
      content,
      metadata,
      timestamp: new Date(Date.UTC(2026, 0, 1, 9, i)),
    })),
  );
  return stored.map((s) => s.event.id);
}

/** Stores messages of a scope and puts them through the chain check's bookkeeping. */
async function remember(sql: Sql, scope: Scope, texts: string[], metadata = {}) {
  const ids = await store(sql, scope, texts, metadata);
  await createEventStore(sql).markChained(ids);
  return ids;
}

// Every turn names Caroline, as a real transcript names its speakers; one says what she did.
const transcript = [
  ...Array.from(
    { length: 30 },
    (_, i) => `Caroline said the weather was nice on day ${i}, and Caroline went for a walk.`,
  ),
  "Caroline has been researching adoption agencies for months.",
  "Caroline painted a sunset over the lake.",
];

function suite(
  name: string,
  open: (t: import("node:test").TestContext) => Promise<Sql | undefined>,
) {
  describe(name, () => {
    test("a rare word outweighs a name found in every turn; word forms meet through stemming", async (t) => {
      const sql = await open(t);
      if (!sql) return;
      await remember(sql, alice, transcript);
      const lexical = createLexicalSearch(sql);
      const query = {
        ...alice,
        agentId: undefined,
        text: "What did Caroline research on adopting?",
      };
      const terms = await lexical.terms(query);
      assert.equal(terms.total, transcript.length);
      const idf = new Map(terms.terms.map((x) => [x.lexeme, x.idf]));
      assert.ok(idf.get("adopt")! > idf.get("carolin")! * 5, JSON.stringify(terms.terms));
      const turns = await lexical.turns({ ...query, limit: 5 }, terms);
      assert.equal(turns[0].content, "Caroline has been researching adoption agencies for months.");
      assert.equal(turns[0].coverage, 1);
      assert.ok(turns[1].coverage < 0.2, "a turn matching only the name covers little");
    });

    test("a user's search never sees another user's or tenant's messages; agent and metadata filters hold", async (t) => {
      const sql = await open(t);
      if (!sql) return;
      await remember(sql, alice, ["I keep my passport in the blue drawer."], { topic: "travel" });
      await remember(sql, { ...alice, agentId: "a2" }, ["The spare passport photo is in the car."]);
      await remember(sql, { ...alice, userId: "bob" }, ["Bob's passport is at the embassy."]);
      await remember(sql, { ...alice, tenantId: "t2" }, ["Tenant two's passport renewal."]);
      const lexical = createLexicalSearch(sql);
      const search = async (extra: object) => {
        const query = { ...alice, agentId: undefined, text: "passport", limit: 10, ...extra };
        return (await lexical.turns(query, await lexical.terms(query)))
          .map((x) => x.content)
          .sort();
      };
      assert.deepEqual(await search({}), [
        "I keep my passport in the blue drawer.",
        "The spare passport photo is in the car.",
      ]);
      assert.deepEqual(await search({ agentId: "a2" }), [
        "The spare passport photo is in the car.",
      ]);
      assert.deepEqual(await search({ filter: { topic: "travel" } }), [
        "I keep my passport in the blue drawer.",
      ]);
      assert.deepEqual(await search({ userId: "bob" }), ["Bob's passport is at the embassy."]);
      assert.deepEqual(await search({ tenantId: "t2" }), ["Tenant two's passport renewal."]);
    });

    test("term frequency counts: a turn about a thing outranks one that names it in passing", async (t) => {
      const sql = await open(t);
      if (!sql) return;
      // Same length in lexemes; the second says "kayak" three times.
      await remember(sql, alice, [
        "We saw a kayak near the bridge after lunch with Tom.",
        "Kayak, kayak everywhere, my kayak club owns the bridge.",
        ...Array.from({ length: 10 }, (_, i) => `Filler turn number ${i} about nothing much.`),
      ]);
      const lexical = createLexicalSearch(sql);
      const query = { ...alice, agentId: undefined, text: "kayak", limit: 5 };
      const turns = await lexical.turns(query, await lexical.terms(query));
      assert.equal(turns[0].content, "Kayak, kayak everywhere, my kayak club owns the bridge.");
      assert.ok(turns[0].score > turns[1].score * 1.3, JSON.stringify(turns.map((x) => x.score)));
      assert.equal(turns[0].coverage, 1);
    });

    test("in a large memory the turns holding the query's rarest word are scored first, whatever the common words bring", async (t) => {
      const sql = await open(t);
      if (!sql) return;
      // More turns hold "garden" than a search scores; the one that also names the orchid is
      // in the middle, where a scan in storage order (or newest first) reaches it after the
      // limit. Left waiting, so that no check moves a row.
      const garden = (from: number) =>
        Array.from({ length: 450 }, (_, i) => `We sat in the garden on afternoon ${from + i}.`);
      await store(sql, alice, [
        ...garden(0),
        "The garden finally has an orchid in bloom.",
        ...garden(450),
      ]);
      const lexical = createLexicalSearch(sql);
      const query = { ...alice, agentId: undefined, text: "orchid in the garden", limit: 5 };
      const terms = await lexical.terms(query);
      assert.deepEqual(
        terms.terms.map((x) => [x.lexeme, x.documents]),
        [
          ["orchid", 1],
          ["garden", 901],
        ],
      );
      const turns = await lexical.turns(query, terms);
      assert.equal(turns[0].content, "The garden finally has an orchid in bloom.");
      assert.equal(turns[0].coverage, 1);
    });

    test("a message counts once into the statistics however often its check is retried", async (t) => {
      const sql = await open(t);
      if (!sql) return;
      const ids = await remember(sql, alice, [
        "Sourdough needs a starter.",
        "Feed the starter daily.",
      ]);
      await createEventStore(sql).markChained(ids);
      const { rows } = await sql.query<{ documents: number }>(
        "SELECT documents FROM memory_lexicon WHERE user_id = 'alice' AND lexeme = 'starter'",
      );
      assert.deepEqual(rows, [{ documents: 2 }]);
      const totals = await sql.query<{ documents: number }>(
        "SELECT documents FROM memory_lexicon_totals WHERE user_id = 'alice'",
      );
      assert.equal(Number(totals.rows[0].documents), 2);
    });

    test("a search scores a message waiting for its chain check as it will once checked", async (t) => {
      const sql = await open(t);
      if (!sql) return;
      await remember(sql, alice, transcript.slice(0, 10));
      const events = createEventStore(sql);
      const session = await createSessionStore(sql).create(alice, {});
      const [waiting] = await events.insertAll([
        {
          sessionId: session.id,
          scope: alice,
          role: "user",
          type: "message",
          content: "Caroline adopted a greyhound; the greyhound sleeps all day.",
          metadata: {},
          timestamp: new Date(Date.UTC(2026, 0, 2, 9)),
        },
      ]);
      const lexical = createLexicalSearch(sql);
      const query = { ...alice, agentId: undefined, text: "Caroline's greyhound", limit: 5 };
      const search = async () => {
        const terms = await lexical.terms(query);
        const feedback = await lexical.feedback(query, [waiting.event.id], terms, 4);
        return { terms, feedback, turns: await lexical.turns(query, terms) };
      };
      const atOnce = await search();
      await events.markChained([waiting.event.id]);
      const checked = await search();
      assert.deepEqual(atOnce, checked);
      assert.equal(atOnce.terms.total, 11);
      assert.equal(atOnce.turns[0].eventId, waiting.event.id);
    });

    test("system messages and non-message events are not indexed; a stopword-only query finds nothing", async (t) => {
      const sql = await open(t);
      if (!sql) return;
      const events = createEventStore(sql);
      const session = await createSessionStore(sql).create(alice, {});
      for (const [role, type] of [
        ["system", "message"],
        ["agent", "thought"],
        ["agent", "action"],
      ] as const) {
        await events.insert({
          sessionId: session.id,
          scope: alice,
          role,
          type,
          content: "the lighthouse keeper",
          metadata: {},
          timestamp: new Date(),
        });
      }
      const lexical = createLexicalSearch(sql);
      const query = { ...alice, text: "lighthouse", limit: 5 };
      assert.deepEqual(await lexical.turns(query, await lexical.terms(query)), []);
      const stop = { ...alice, text: "what was it?", limit: 5 };
      assert.deepEqual((await lexical.terms(stop)).terms, []);
    });
  });
}

suite("lexical search on PGlite", async (t) => {
  const sql = await createPgliteSql();
  t.after(() => sql.close());
  await migrateMemory(sql);
  return sql;
});

suite("lexical search on PostgreSQL", async (t) => {
  if (!(await needsServer(t, "postgres"))) return undefined;
  const pg = await createTestPostgres();
  t.after(() => pg.drop());
  await migrateMemory(pg.sql);
  return pg.sql;
});

test("the migration indexes messages stored before it, counting those already chained", async (t) => {
  const sql = await createPgliteSql();
  t.after(() => sql.close());
  // The schema as it was before lexical search.
  const before = await mkdtemp(join(tmpdir(), "memory-migrations-"));
  t.after(() => rm(before, { recursive: true, force: true }));
  for (const file of await readdir(migrationsDir)) {
    if (file < "0003") await copyFile(join(migrationsDir, file), join(before, file));
  }
  await runMigrations(sql, { dir: before, namespace: "memory" });
  const session = await createSessionStore(sql).create(alice, {});
  for (const [content, state] of [
    ["The lighthouse was painted red.", "done"],
    ["The lighthouse keeper retired.", "pending"],
  ]) {
    await sql.query(
      `INSERT INTO memory_events (id, session_id, tenant_id, user_id, agent_id, role, type, content, occurred_at, chain_state)
       VALUES (gen_random_uuid(), $1, 't1', 'alice', 'a1', 'user', 'message', $2, now(), $3)`,
      [session.id, content, state],
    );
  }
  await migrateMemory(sql);
  const lexical = createLexicalSearch(sql);
  const query = { ...alice, text: "lighthouse", limit: 5 };
  const { rows } = await sql.query<{ documents: number }>(
    "SELECT documents FROM memory_lexicon_totals WHERE user_id = 'alice'",
  );
  assert.equal(Number(rows[0].documents), 1, "the lexicon holds the chained message only");
  const terms = await lexical.terms(query);
  assert.equal(terms.total, 2, "a search counts the waiting message too");
  assert.equal((await lexical.turns(query, terms)).length, 2, "both are searchable");
});
