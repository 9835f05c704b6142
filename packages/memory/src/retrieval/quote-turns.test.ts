import assert from "node:assert/strict";
import { test } from "node:test";
import type { Turn } from "../store/turns.js";
import { ending, excerpt, opening, quoteTurns } from "./quote-turns.js";

/** Question words of equal weight. */
const words = (...lexemes: string[]) => lexemes.map((lexeme) => ({ lexeme, weight: 1 }));

const turn = (role: "user" | "agent", content: string, at: string): Turn => ({
  eventId: `${role}-${at}`,
  sessionId: "s",
  role,
  source: role,
  content,
  occurredAt: new Date(at),
});

test("a line is stamped in full on a new day, by its minute later that day, not at all the same minute", () => {
  assert.deepEqual(
    quoteTurns([
      { turn: turn("user", "Did you book the ferry?", "2026-02-03T14:05:10Z"), terms: [] },
      { turn: turn("agent", "Yes, for Friday.", "2026-02-03T14:05:40Z"), terms: [] },
      { turn: turn("user", "Which deck?", "2026-02-03T14:07:00Z"), terms: [] },
      { turn: turn("agent", "The upper one.", "2026-02-04T09:00:00Z"), terms: [] },
    ]).split("\n"),
    [
      "[2026-02-03 14:05] User: Did you book the ferry?",
      "Agent: Yes, for Friday.",
      "[14:07] User: Which deck?",
      "[2026-02-04 09:00] Agent: The upper one.",
    ],
  );
});

test("a time of exactly midnight UTC is stamped as a date alone", () => {
  assert.deepEqual(
    quoteTurns([
      { turn: turn("user", "We moved to Lisbon.", "2023-05-08T00:00:00Z"), terms: [] },
      { turn: turn("agent", "How is it?", "2023-05-08T00:00:00Z"), terms: [] },
      { turn: turn("user", "Sunny.", "2023-05-08T09:30:00Z"), terms: [] },
      { turn: turn("agent", "Lucky you.", "2023-05-09T00:00:00Z"), terms: [] },
      { turn: turn("user", "Midnight snack.", "2023-05-10T00:00:00.250Z"), terms: [] },
    ]).split("\n"),
    [
      "[2023-05-08] User: We moved to Lisbon.",
      "Agent: How is it?",
      "[09:30] User: Sunny.",
      "[2023-05-09] Agent: Lucky you.",
      "[2023-05-10 00:00] User: Midnight snack.",
    ],
  );
});

test("turns are quoted oldest first, the user before the agent at the same time", () => {
  const at = "2026-02-03T14:05:59Z";
  assert.equal(
    quoteTurns([
      { turn: turn("agent", "Noted.", at), terms: [] },
      { turn: turn("user", "I fly to Lisbon in May.", at), terms: words("lisbon") },
      { turn: turn("user", "Earlier words.", "2026-02-01T08:00:00Z"), terms: [] },
    ]),
    [
      "[2026-02-01 08:00] User: Earlier words.",
      "[2026-02-03 14:05] User: I fly to Lisbon in May.",
      "Agent: Noted.",
    ].join("\n"),
  );
});

test("a long turn is cut to the sentences that matched, with the one after the best", () => {
  const filler = (n: number) =>
    Array.from({ length: n }, (_, i) => `Filler sentence number ${i} says nothing at all.`);
  const text = [...filler(4), "The passport is in the blue drawer.", ...filler(4)].join(" ");
  assert.equal(
    excerpt(text, words("passport")),
    "… The passport is in the blue drawer. Filler sentence number 0 says nothing at all. …",
  );
  const short = "A short turn stays whole. Even with two sentences.";
  assert.equal(excerpt(short, words("nothing")), short);
  // Nothing matched by word (a turn found by its vector): the opening, cut to the bound.
  const opening = excerpt(filler(12).join(" "), words("zebra"));
  assert.ok(opening.startsWith("Filler sentence number 0") && opening.length <= 330, opening);
});

test("a long turn is quoted by the sentences holding the question's rarest words, not by where it starts", () => {
  const text =
    "elise: That sounds incredible Kevin. Your passion for pursuing a career at Microsoft is " +
    "fascinating and I admire it a lot. It is such a great experience that you can play soccer " +
    "at Stanford since it is a passion for you. I currently play tennis at university and train " +
    "most days. My coach thinks I could turn professional one day. Anyway, how was your week?";
  // "What sports does Elise play?": the name is in every turn of hers, "play" in few.
  const terms = [
    { lexeme: "sport", weight: 2 },
    { lexeme: "elis", weight: 0.2 },
    { lexeme: "play", weight: 1.5 },
  ];
  const quoted = excerpt(text, terms);
  assert.equal(
    quoted,
    "… It is such a great experience that you can play soccer at Stanford since it is a passion for you. I currently play tennis at university and train most days. …",
  );
  assert.ok(quoted.length <= 200);
});

test("a megabyte message is cut to what matched like any long turn", () => {
  const text = `${"Ok then. ".repeat(150_000)}The passport is in the blue drawer.`;
  assert.equal(excerpt(text, words("passport")), "… The passport is in the blue drawer.");
});

test("a megabyte message of one sentence matching everywhere is quoted in one pass", () => {
  const text = `${"my passport and my ticket ".repeat(40_000)}and the blue drawer`;
  const quoted = excerpt(text, words("drawer", "passport"));
  assert.ok(quoted.length <= 200, quoted);
  assert.ok(quoted.endsWith("ticket and the blue drawer"), quoted);
});

test("a turn quoted as what a reply answers is quoted by its ending, whole sentences", () => {
  const long =
    "We spent the whole weekend at my parents' place, the garden needed work and dad had a list. " +
    "The drive back took four hours because of the roadworks near the bridge. " +
    "Anyway, guess what we finally adopted on Sunday?";
  const at = "2026-02-03T14:05:00Z";
  const quoted = quoteTurns([
    { turn: turn("user", long, at), terms: [], as: "answered" },
    { turn: turn("agent", "A greyhound? Biscuit sounds lovely.", at), terms: words("biscuit") },
  ]);
  assert.equal(
    quoted,
    [
      "[2026-02-03 14:05] User: … The drive back took four hours because of the roadworks near the bridge. Anyway, guess what we finally adopted on Sunday?",
      "Agent: A greyhound? Biscuit sounds lovely.",
    ].join("\n"),
  );
  const short = quoteTurns([{ turn: turn("user", "Guess what?", at), terms: [], as: "answered" }]);
  assert.equal(short, "[2026-02-03 14:05] User: Guess what?");
});

test("a turn quoted as what a long reply answers is quoted by its last words", () => {
  const at = "2026-02-03T14:05:00Z";
  const asked =
    "The training plan was brutal this winter, six days a week. My knees complained the " +
    "whole time. In the end I signed up for the spring race.";
  assert.equal(
    quoteTurns([{ turn: turn("user", asked, at), terms: [], as: "asked" }]),
    "[2026-02-03 14:05] User: … In the end I signed up for the spring race.",
  );
});

test("a reply quoted as what answers a matched question is quoted by its opening", () => {
  const at = "2026-02-03T14:05:00Z";
  const reply =
    "Yes, I start at the clinic in May. The interview went on for three hours and they asked " +
    "about everything from night shifts to parking.";
  const quoted = quoteTurns([
    { turn: turn("user", "Did you get the job at the clinic?", at), terms: words("job") },
    { turn: turn("agent", reply, at), terms: [], as: "reply" },
  ]);
  assert.equal(
    quoted,
    [
      "[2026-02-03 14:05] User: Did you get the job at the clinic?",
      "Agent: Yes, I start at the clinic in May. …",
    ].join("\n"),
  );
});

test("the same speaker's messages around a matched one are quoted by the edge that joins them", () => {
  const long = (words: string) => `${words} ${"and then some more words. ".repeat(6)}`.trim();
  const quoted = quoteTurns([
    {
      turn: turn("user", long("So I went to the shop."), "2026-02-03T14:04:00Z"),
      terms: [],
      as: "before",
    },
    { turn: turn("user", "I bought the red bike.", "2026-02-03T14:05:00Z"), terms: words("bike") },
    {
      turn: turn("user", long("It was on sale."), "2026-02-03T14:06:00Z"),
      terms: [],
      as: "after",
    },
  ]).split("\n");
  assert.equal(
    quoted[0],
    "[2026-02-03 14:04] User: … and then some more words. and then some more words.",
  );
  assert.equal(quoted[1], "[14:05] User: I bought the red bike.");
  assert.match(quoted[2], /^\[14:06\] User: It was on sale\. and then some more words\. … ?$/);
  assert.ok(quoted[0].length - "[2026-02-03 14:04] User: ".length <= 60);
  assert.ok(quoted[2].length - "[14:06] User: ".length <= 60);
});

test("a sentence too long for its quote is quoted around the question's words, not by its start", () => {
  const said =
    "Yeah unfortunately I havent asked the doctor whats wrong with it its usually when its dry " +
    "or really hot out I just hope its nothing serious enjoy your day off if you can past the " +
    "stomach ache I had bad stomach pains like 2 weeks ago and thought I was gonna die";
  // "When did Nicolas have a stomach ache?"
  const quoted = excerpt(said, words("stomach", "ach"));
  assert.ok(quoted.length <= 200, quoted);
  assert.ok(quoted.startsWith("… "), quoted);
  assert.ok(quoted.endsWith("like 2 weeks ago and thought I was gonna die"), quoted);
  const spoken = new Set(said.split(" "));
  for (const word of quoted.replace(/…/g, " ").trim().split(/\s+/))
    assert.ok(spoken.has(word), `"${word}" in ${quoted}`);
  // Nothing matched: its start.
  assert.ok(excerpt(said, words("zebra")).startsWith("Yeah unfortunately"));
});

test("a sentence too long for its quote is cut between words, never inside one", () => {
  const said = `I ${"really ".repeat(40)}loved the spring race in the hills above town`;
  const spoken = new Set(said.split(" "));
  const wordsOf = (quote: string) => quote.replace(/…/g, " ").trim().split(/\s+/);
  for (const quote of [ending(said, 60), opening(said, 60), excerpt(said, words("race"))]) {
    assert.ok(quote.length <= 200, quote);
    for (const word of wordsOf(quote)) assert.ok(spoken.has(word), `"${word}" in ${quote}`);
  }
  assert.equal(ending(said, 60), "…really really loved the spring race in the hills above town");
  assert.equal(opening(said, 60), "I really really really really really really really really…");
});

test("a transcript's speakers are quoted by their names, a turn without its side's name by role", () => {
  const names = { user: new Set(["Nicolas"]), agent: new Set(["Vanessa"]) };
  const long = `Nicolas: ${"We walked along the river for hours. ".repeat(8)}Then the ferry left at noon.`;
  assert.deepEqual(
    quoteTurns(
      [
        {
          turn: turn("user", "Nicolas: Did you book the ferry?", "2026-02-03T14:05:00Z"),
          terms: [],
        },
        { turn: turn("agent", "Vanessa: Yes, for Friday.", "2026-02-03T14:06:00Z"), terms: [] },
        { turn: turn("agent", "Note: bring tickets", "2026-02-03T14:07:00Z"), terms: [] },
        { turn: turn("user", long, "2026-02-03T14:08:00Z"), terms: words("noon") },
      ],
      names,
    ).split("\n"),
    [
      "[2026-02-03 14:05] Nicolas: Did you book the ferry?",
      "[14:06] Vanessa: Yes, for Friday.",
      "[14:07] Agent: Note: bring tickets",
      "[14:08] Nicolas: … Then the ferry left at noon.",
    ],
  );
});
