import assert from "node:assert/strict";
import { describe, type TestContext, test } from "node:test";
import { createPgliteSql, type Sql } from "@atrium/kit";
import { createTestPostgres, needsServer } from "@atrium/kit/testing";
import type { Scope } from "../domain.js";
import { createWeightedHashEmbedder } from "../embeddings/weighted-hash-embedder.js";
import { chainStore } from "../store/chains.js";
import { createEventStore } from "../store/events.js";
import { createLexicalSearch } from "../store/lexical-search.js";
import { migrateMemory } from "../store/migrate.js";
import { createSessionStore } from "../store/sessions.js";
import { createVectorSearch } from "../store/vector-search.js";
import { testChain } from "../testing/chain-record.js";
import { createRetrieval, type Retrieval } from "./retrieval.js";

const embedder = createWeightedHashEmbedder();
const alice: Scope = { tenantId: "t1", userId: "alice", agentId: "a1" };

/**
 * Stores a conversation as the chain check leaves it: the messages counted into the lexicon and
 * grouped into one chain (`chained: false` leaves them unchained, as before their check).
 */
async function converse(
  sql: Sql,
  scope: Scope,
  lines: string[],
  start: string,
  chained = true,
  /** Who says each line and when, in minutes from `start`: by default turn about, a minute apart. */
  said: { role: "user" | "agent"; minute: number }[] = [],
) {
  const session = await createSessionStore(sql).create(scope, {});
  const events = createEventStore(sql);
  const stored = await events.insertAll(
    lines.map((content, i) => ({
      sessionId: session.id,
      scope,
      role: said[i]?.role ?? (i % 2 ? ("agent" as const) : ("user" as const)),
      type: "message" as const,
      content,
      metadata: {},
      timestamp: new Date(Date.parse(start) + (said[i]?.minute ?? i) * 60_000),
    })),
  );
  const ids = stored.map((s) => s.event.id);
  await events.markChained(ids);
  if (!chained) return { chainId: undefined, ids };
  const content = lines.join("\n");
  const chain = testChain(scope, {
    sessionId: session.id,
    eventIds: ids,
    content,
    summary: lines[0],
    embedding: (await embedder.embed([content]))[0],
    embeddingModel: embedder.model,
  });
  await chainStore.save(sql, chain);
  await events.placeInChain(sql, chain.id, ids);
  return { chainId: chain.id, ids };
}

const smallTalk = (topic: string, n: number) =>
  Array.from({ length: n }, (_, i) => `We chatted about ${topic} again, round ${i}, nothing new.`);

/** Small talk between two people, each line opening with its speaker's name. */
const namedSmallTalk = (topic: string, n: number) =>
  smallTalk(topic, n).map((line, i) => `${i % 2 ? "Vanessa" : "Nicolas"}: ${line}`);

function suite(name: string, open: (t: TestContext) => Promise<Sql | undefined>) {
  describe(name, () => {
    async function setUp(t: TestContext): Promise<{ sql: Sql; retrieval: Retrieval } | undefined> {
      const sql = await open(t);
      if (!sql) return undefined;
      const vectorSearch = await createVectorSearch({ sql, dimensions: embedder.dimensions });
      const retrieval = createRetrieval({
        sql,
        embedder,
        vectorSearch,
        lexical: createLexicalSearch(sql),
      });
      return { sql, retrieval };
    }

    test("a page quotes the turns that matched with time and speaker, never the whole chain", async (t) => {
      const ctx = await setUp(t);
      if (!ctx) return;
      const lines = [
        ...smallTalk("the weather", 6),
        "I've been researching adoption agencies for months now.",
        "That is a big step. Which agencies?",
        "Bright Futures and Open Arms, mostly.",
        ...smallTalk("the weather", 6),
      ];
      const { chainId } = await converse(ctx.sql, alice, lines, "2026-02-03T14:00:00Z");
      await converse(ctx.sql, alice, smallTalk("gardening", 8), "2026-02-10T09:00:00Z");
      const [page, ...rest] = await ctx.retrieval.search({
        ...alice,
        agentId: undefined,
        text: "What did she research about adopting?",
        limit: 5,
      });
      assert.equal(page.sourceType, "dialogue_page");
      assert.equal(page.sourceId, chainId);
      // The reply matched too ("agencies"), and its question brings the answer to it; the
      // weather talk around them did not.
      assert.equal(
        page.content,
        [
          "[2026-02-03 14:06] User: I've been researching adoption agencies for months now.",
          "[14:07] Agent: That is a big step. Which agencies?",
          "[14:08] User: Bright Futures and Open Arms, mostly.",
        ].join("\n"),
      );
      assert.equal(page.timestamp.toISOString(), "2026-02-03T14:06:00.000Z");
      assert.ok(page.score > 0.5 && page.score <= 1);
      assert.ok(
        !rest.some((p) => p.sourceId === chainId),
        "the small talk around them is no result of its own",
      );
      for (let i = 1; i < rest.length; i++) assert.ok(rest[i - 1].score >= rest[i].score);
    });

    test("a matched question brings the reply that answers it, in other words", async (t) => {
      const ctx = await setUp(t);
      if (!ctx) return;
      const { ids } = await converse(
        ctx.sql,
        alice,
        [
          ...smallTalk("the weather", 4),
          "Did the vet finally say what the swelling on the paw was?",
          "A harmless cyst, nothing to remove.",
          ...smallTalk("the weather", 4),
        ],
        "2026-02-03T14:00:00Z",
      );
      const [page] = await ctx.retrieval.search({
        ...alice,
        agentId: undefined,
        text: "What did the vet say about the swelling?",
        limit: 3,
      });
      assert.deepEqual(
        page.turns.map((turn) => turn.eventId),
        [ids[4], ids[5]],
      );
      assert.match(page.content, /Agent: A harmless cyst, nothing to remove\.$/);
    });

    test("only the six best matched questions bring their replies", async (t) => {
      const ctx = await setUp(t);
      if (!ctx) return;
      const rivers = ["Wye", "Spey", "Tay", "Dee", "Tweed", "Severn", "Usk", "Teifi"];
      const { ids } = await converse(
        ctx.sql,
        alice,
        rivers.flatMap((river, i) => [
          `Have you ever taken the kayak down the ${river}?`,
          `Once, in spring ${2010 + i}, with my cousin.`,
        ]),
        "2026-02-03T14:00:00Z",
        true,
        rivers.flatMap((_, i) => [
          { role: "user" as const, minute: 10 * i },
          { role: "agent" as const, minute: 10 * i + 1 },
        ]),
      );
      const pages = await ctx.retrieval.search({
        ...alice,
        agentId: undefined,
        text: "Which rivers did we kayak?",
        limit: 10,
      });
      const questions = ids.filter((_, i) => i % 2 === 0);
      assert.deepEqual(
        pages.map((page) => page.turns[0].eventId).sort(),
        [...questions].sort(),
        "every question is a result",
      );
      const replied = pages.filter((page) => page.turns.length === 2);
      assert.equal(replied.length, 6);
      for (const page of replied) {
        assert.equal(page.turns[1].eventId, ids[ids.indexOf(page.turns[0].eventId) + 1]);
      }
      assert.deepEqual(replied, pages.slice(0, 6), "the six best");
    });

    test("an agent's matched question brings the user's answer to it, not what came before it", async (t) => {
      const ctx = await setUp(t);
      if (!ctx) return;
      const { ids } = await converse(
        ctx.sql,
        alice,
        [
          ...smallTalk("the weather", 5),
          "How often do you go swimming these days?",
          "Twice a week, at the lido before work.",
          ...smallTalk("the weather", 4),
        ],
        "2026-02-03T14:00:00Z",
      );
      const [page] = await ctx.retrieval.search({
        ...alice,
        agentId: undefined,
        text: "How often does she go swimming?",
        limit: 3,
      });
      assert.deepEqual(
        page.turns.map((turn) => turn.eventId),
        [ids[5], ids[6]],
      );
      assert.match(page.content, /User: Twice a week, at the lido before work\.$/);
    });

    test("a short reply brings the user turn it answers whole, a long one only that turn's last words", async (t) => {
      const ctx = await setUp(t);
      if (!ctx) return;
      const adopted =
        "We spent the weekend at my parents' place and the garden needed work. Dad had a long " +
        "list for us. Anyway, guess what we finally adopted on Sunday?";
      const trained =
        "The training plan was brutal this winter, six days a week. My knees complained the " +
        "whole time. In the end I signed up for the spring race.";
      await converse(
        ctx.sql,
        alice,
        [
          ...smallTalk("the weather", 4),
          adopted,
          "Biscuit sounds lovely.",
          ...smallTalk("the weather", 4),
          trained,
          "A spring marathon is a fine goal after a winter like that, and your knees will thank " +
            "you for the easier weeks before it.",
          ...smallTalk("the weather", 2),
        ],
        "2026-02-03T14:00:00Z",
      );
      const first = async (text: string) =>
        (await ctx.retrieval.search({ ...alice, agentId: undefined, text, limit: 3 }))[0];
      assert.equal(
        (await first("Biscuit")).content,
        `[2026-02-03 14:04] User: ${adopted}\n[14:05] Agent: Biscuit sounds lovely.`,
      );
      const marathon = await first("marathon goal");
      assert.match(
        marathon.content,
        /^\[2026-02-03 14:10\] User: … In the end I signed up for the spring race\.\n\[14:11\] Agent: A spring marathon/,
      );
      assert.equal(marathon.turns[0].content, trained, "the turn is listed whole");
    });

    test("a transcript of two named people is quoted by their names, a matched turn of either side alone", async (t) => {
      const ctx = await setUp(t);
      if (!ctx) return;
      await converse(
        ctx.sql,
        alice,
        [
          ...namedSmallTalk("the weather", 12),
          "Nicolas: We adopted a retired greyhound on Sunday, guess what we called him?",
          "Vanessa: Biscuit sounds lovely.",
          ...namedSmallTalk("the traffic", 12),
        ],
        "2026-02-03T14:00:00Z",
      );
      const [biscuit] = await ctx.retrieval.search({
        ...alice,
        agentId: undefined,
        text: "Biscuit",
        limit: 3,
      });
      assert.equal(biscuit.content, "[2026-02-03 14:13] Vanessa: Biscuit sounds lovely.");
      const [greyhound] = await ctx.retrieval.search({
        ...alice,
        agentId: undefined,
        text: "greyhound",
        limit: 3,
      });
      // A question still brings the reply that answers it, whoever asked.
      assert.equal(
        greyhound.content,
        [
          "[2026-02-03 14:12] Nicolas: We adopted a retired greyhound on Sunday, guess what we called him?",
          "[14:13] Vanessa: Biscuit sounds lovely.",
        ].join("\n"),
      );
    });

    test("two people stored as the user: a question naming one ranks that one's turns first", async (t) => {
      const ctx = await setUp(t);
      if (!ctx) return;
      const lines = [
        ...namedSmallTalk("the weather", 12),
        "Vanessa: I have been painting watercolours every evening this month.",
        "Nicolas: I have been painting the fence every evening this month.",
      ];
      await converse(
        ctx.sql,
        alice,
        lines,
        "2026-02-03T14:00:00Z",
        true,
        lines.map((_, i) => ({ role: "user", minute: i })),
      );
      const first = async (text: string) =>
        (await ctx.retrieval.search({ ...alice, agentId: undefined, text, limit: 3 }))[0];
      assert.match(
        (await first("What has Nicolas been painting?")).content,
        /\] Nicolas: I have been painting the fence/,
      );
      assert.match(
        (await first("What has Vanessa been painting?")).content,
        /\] Vanessa: I have been painting watercolours/,
      );
      // A name misspelt, in a word no message holds, is still that speaker's.
      assert.match(
        (await first("What has Vanesa been painting?")).content,
        /\] Vanessa: I have been painting watercolours/,
      );
    });

    test("a matched message brings its speaker's next message, said within minutes, not a later one", async (t) => {
      const ctx = await setUp(t);
      if (!ctx) return;
      const lines = [
        ...smallTalk("the weather", 4),
        "Remember the manga you kept recommending, Orange?",
        "I finally started it on the train, two chapters in.",
        "Nice, tell me what you think.",
        ...smallTalk("the weather", 3),
        "Remember the novel you kept recommending, Pachinko?",
        "Still on my shelf, sadly.",
      ];
      const turnAbout = (i: number) => ({ role: i % 2 ? "agent" : "user", minute: i }) as const;
      const { ids } = await converse(ctx.sql, alice, lines, "2026-02-03T14:00:00Z", true, [
        ...[0, 1, 2, 3].map(turnAbout),
        { role: "user", minute: 4 },
        { role: "user", minute: 5 },
        { role: "agent", minute: 6 },
        ...[7, 8, 9].map(turnAbout),
        { role: "user", minute: 10 },
        { role: "user", minute: 30 },
      ]);
      const search = (text: string) =>
        ctx.retrieval.search({ ...alice, agentId: undefined, text, limit: 1 });
      const [orange] = await search("Did I get to the Orange manga you recommended?");
      assert.deepEqual(
        orange.turns.map((turn) => turn.eventId),
        [ids[4], ids[5]],
      );
      assert.match(orange.content, /User: I finally started it on the train, two chapters in\.$/);
      const [pachinko] = await search("Did I get to the Pachinko novel you recommended?");
      assert.deepEqual(
        pachinko.turns.map((turn) => turn.eventId),
        [ids[10]],
        "a message twenty minutes later is another thought",
      );
    });

    test("turns stored with one time (an import with dates only) are quoted in the order they were said", async (t) => {
      const ctx = await setUp(t);
      if (!ctx) return;
      const lines = [
        ...smallTalk("the weather", 4),
        "Remember the manga you kept recommending?",
        "I finally started Orange on the train, two chapters in.",
        "Nice, tell me what you think.",
      ];
      const { ids } = await converse(ctx.sql, alice, lines, "2026-02-03T00:00:00Z", true, [
        ...[0, 1, 2, 3].map((i) => ({ role: i % 2 ? "agent" : "user", minute: 0 }) as const),
        { role: "user", minute: 0 },
        { role: "user", minute: 0 },
        { role: "agent", minute: 0 },
      ]);
      const [orange] = await ctx.retrieval.search({
        ...alice,
        agentId: undefined,
        text: "Did I start reading Orange?",
        limit: 1,
      });
      assert.deepEqual(
        orange.turns.map((turn) => turn.eventId),
        [ids[4], ids[5]],
      );
      assert.equal(
        orange.content,
        [
          "[2026-02-03] User: Remember the manga you kept recommending?",
          "User: I finally started Orange on the train, two chapters in.",
        ].join("\n"),
      );
    });

    test("a question naming a day finds the turn that speaks of it, said the day after", async (t) => {
      const ctx = await setUp(t);
      if (!ctx) return;
      await converse(ctx.sql, alice, smallTalk("the library", 12), "2024-01-04T10:00:00Z");
      // Said on 6 January about the 5th: shares no word with the question but its day.
      const { ids } = await converse(
        ctx.sql,
        alice,
        ["Yesterday my laptop died halfway through the essay, I lost two pages.", "Oh no!"],
        "2024-01-06T09:00:00Z",
      );
      await converse(ctx.sql, alice, smallTalk("the library", 12), "2024-01-09T10:00:00Z");
      const question = { ...alice, text: "What happened to her in the library on 5 January 2024?" };
      const pages = await ctx.retrieval.search({ ...question, limit: 3 });
      assert.ok(
        pages.some((p) => p.content.includes("Yesterday my laptop died")),
        pages.map((p) => p.content).join("\n"),
      );
      // Without the day, the library small talk fills the places.
      const undated = await ctx.retrieval.search({
        ...question,
        text: "What happened to her in the library?",
        limit: 3,
      });
      assert.ok(!undated.some((p) => p.content.includes("Yesterday my laptop died")));
      assert.equal(ids.length, 2);
    });

    test("explain gives each page the lexical and vector ranks that were fused, and changes nothing else", async (t) => {
      const ctx = await setUp(t);
      if (!ctx) return;
      const { chainId } = await converse(
        ctx.sql,
        alice,
        ["Our kayak trip down the Danube starts in Passau.", "Pack a dry bag for the kayak."],
        "2026-06-01T08:00:00Z",
      );
      // Shares no word with the query: only its vector can rank it, if anything does.
      await converse(ctx.sql, alice, smallTalk("the weather", 3), "2026-06-02T08:00:00Z");
      const query = { ...alice, text: "kayak Danube", limit: 5 };
      const plain = await ctx.retrieval.search(query);
      const explained = await ctx.retrieval.search(query, { explain: true });
      assert.ok(plain.every((p) => p.ranks === undefined));
      assert.deepEqual(
        explained.map(({ ranks: _, ...page }) => page),
        plain,
      );
      assert.equal(explained[0].sourceId, chainId);
      assert.equal(explained[0].ranks?.lexical, 1);
      assert.equal(typeof explained[0].ranks?.vector, "number");
      for (const page of explained.slice(1)) {
        assert.notEqual(page.ranks?.lexical, 1, "one turn holds the first lexical place");
      }
    });

    test("a second hop reaches the turn a first hit links to by a name", async (t) => {
      const ctx = await setUp(t);
      if (!ctx) return;
      await converse(
        ctx.sql,
        alice,
        ["My bandmate Rafael got hired as a sommelier.", "Nobody saw that coming!"],
        "2026-01-05T10:00:00Z",
      );
      await converse(ctx.sql, alice, smallTalk("music", 10), "2026-02-01T10:00:00Z");
      await converse(
        ctx.sql,
        alice,
        ["Rafael spent the whole weekend birdwatching again.", "He loves it."],
        "2026-03-01T10:00:00Z",
      );
      await converse(ctx.sql, alice, ["Rafael called about rehearsal."], "2026-03-02T10:00:00Z");
      const pages = await ctx.retrieval.search({
        ...alice,
        text: "What pastime has the sommelier taken up?",
        limit: 5,
      });
      const text = pages.map((p) => p.content).join("\n");
      assert.match(text, /sommelier/);
      assert.match(text, /birdwatching/);
    });

    test("messages not chained yet are found as messages; other users and tenants never", async (t) => {
      const ctx = await setUp(t);
      if (!ctx) return;
      const { ids } = await converse(
        ctx.sql,
        alice,
        ["The lighthouse keeper retired last spring."],
        "2026-04-01T08:00:00Z",
        false,
      );
      await converse(
        ctx.sql,
        { ...alice, userId: "bob" },
        ["Bob's lighthouse tour."],
        "2026-04-01T08:00:00Z",
      );
      await converse(
        ctx.sql,
        { ...alice, tenantId: "t2" },
        ["A lighthouse in tenant two."],
        "2026-04-01T08:00:00Z",
      );
      const pages = await ctx.retrieval.search({ ...alice, text: "lighthouse", limit: 10 });
      assert.deepEqual(
        pages.map((p) => [p.sourceType, p.sourceId]),
        [["message", ids[0]]],
      );
      assert.match(pages[0].content, /^\[2026-04-01 08:00\] User: The lighthouse keeper/);
    });

    test("a question naming one speaker of a transcript ranks what that speaker said first", async (t) => {
      const ctx = await setUp(t);
      if (!ctx) return;
      const lines = Array.from({ length: 24 }, (_, i) =>
        i % 2 ? `Vanessa: nice, the weather was ${i} degrees` : `Nicolas: slept well, day ${i}`,
      );
      lines[10] = "Nicolas: I finally ran the Lisbon marathon.";
      lines[11] = "Vanessa: The Lisbon marathon! My brother ran the Lisbon marathon twice.";
      await converse(ctx.sql, alice, lines, "2026-04-01T08:00:00Z");
      const pages = await ctx.retrieval.search({
        ...alice,
        text: "Which marathon did Nicolas run in Lisbon?",
        limit: 1,
      });
      assert.deepEqual(
        pages[0].turns.map((t) => t.content),
        ["Nicolas: I finally ran the Lisbon marathon."],
      );
    });

    test("an unrelated question scores low, so a caller can hold results to a floor", async (t) => {
      const ctx = await setUp(t);
      if (!ctx) return;
      await converse(
        ctx.sql,
        alice,
        ["Run this: console.log([3,1,2].sort())", "[ 1, 2, 3 ]"],
        "2026-05-01T08:00:00Z",
      );
      const unrelated = await ctx.retrieval.search({
        ...alice,
        text: "Who wrote Pride and Prejudice?",
        limit: 5,
      });
      assert.ok((unrelated[0]?.score ?? 0) < 0.25, JSON.stringify(unrelated));
      const related = await ctx.retrieval.search({ ...alice, text: "console.log sort", limit: 5 });
      assert.ok(related[0].score > 0.5);
    });
  });
}

suite("hybrid retrieval on PGlite", async (t) => {
  const sql = await createPgliteSql();
  t.after(() => sql.close());
  await migrateMemory(sql);
  return sql;
});

suite("hybrid retrieval on PostgreSQL", async (t) => {
  if (!(await needsServer(t, "postgres"))) return undefined;
  const pg = await createTestPostgres();
  t.after(() => pg.drop());
  await migrateMemory(pg.sql);
  return pg.sql;
});
