import assert from "node:assert/strict";
import { test } from "node:test";
import type { Turn } from "../store/turns.js";
import { excerpt, quoteTurns } from "./quote-turns.js";

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
      { turn: turn("user", "Did you book the ferry?", "2026-02-03T14:05:10Z"), lexemes: [] },
      { turn: turn("agent", "Yes, for Friday.", "2026-02-03T14:05:40Z"), lexemes: [] },
      { turn: turn("user", "Which deck?", "2026-02-03T14:07:00Z"), lexemes: [] },
      { turn: turn("agent", "The upper one.", "2026-02-04T09:00:00Z"), lexemes: [] },
    ]).split("\n"),
    [
      "[2026-02-03 14:05] User: Did you book the ferry?",
      "Agent: Yes, for Friday.",
      "[14:07] User: Which deck?",
      "[2026-02-04 09:00] Agent: The upper one.",
    ],
  );
});

test("turns are quoted oldest first, the user before the agent at the same time", () => {
  const at = "2026-02-03T14:05:59Z";
  assert.equal(
    quoteTurns([
      { turn: turn("agent", "Noted.", at), lexemes: [] },
      { turn: turn("user", "I fly to Lisbon in May.", at), lexemes: ["lisbon"] },
      { turn: turn("user", "Earlier words.", "2026-02-01T08:00:00Z"), lexemes: [] },
    ]),
    [
      "[2026-02-01 08:00] User: Earlier words.",
      "[2026-02-03 14:05] User: I fly to Lisbon in May.",
      "Agent: Noted.",
    ].join("\n"),
  );
});

test("a long turn is cut to the sentences that matched, with one of context each side", () => {
  const filler = (n: number) =>
    Array.from({ length: n }, (_, i) => `Filler sentence number ${i} says nothing at all.`);
  const text = [...filler(4), "The passport is in the blue drawer.", ...filler(4)].join(" ");
  assert.equal(
    excerpt(text, ["passport"]),
    "… Filler sentence number 3 says nothing at all. The passport is in the blue drawer. Filler sentence number 0 says nothing at all. …",
  );
  const short = "A short turn stays whole. Even with two sentences.";
  assert.equal(excerpt(short, ["nothing"]), short);
  // Nothing matched by word (a turn found by its vector): the opening, cut to the bound.
  const opening = excerpt(filler(12).join(" "), ["zebra"]);
  assert.ok(opening.startsWith("Filler sentence number 0") && opening.length <= 330, opening);
});

test("a turn quoted as what a reply answers is quoted by its ending, whole sentences", () => {
  const long =
    "We spent the whole weekend at my parents' place, the garden needed work and dad had a list. " +
    "The drive back took four hours because of the roadworks near the bridge. " +
    "Anyway, guess what we finally adopted on Sunday?";
  const at = "2026-02-03T14:05:00Z";
  const quoted = quoteTurns([
    { turn: turn("user", long, at), lexemes: [], as: "answered" },
    { turn: turn("agent", "A greyhound? Biscuit sounds lovely.", at), lexemes: ["biscuit"] },
  ]);
  assert.equal(
    quoted,
    [
      "[2026-02-03 14:05] User: … The drive back took four hours because of the roadworks near the bridge. Anyway, guess what we finally adopted on Sunday?",
      "Agent: A greyhound? Biscuit sounds lovely.",
    ].join("\n"),
  );
  const short = quoteTurns([
    { turn: turn("user", "Guess what?", at), lexemes: [], as: "answered" },
  ]);
  assert.equal(short, "[2026-02-03 14:05] User: Guess what?");
});

test("a reply quoted as what answers a matched question is quoted by its opening", () => {
  const at = "2026-02-03T14:05:00Z";
  const reply =
    "Yes, I start at the clinic in May. The interview went on for three hours and they asked " +
    "about everything from night shifts to parking.";
  const quoted = quoteTurns([
    { turn: turn("user", "Did you get the job at the clinic?", at), lexemes: ["job"] },
    { turn: turn("agent", reply, at), lexemes: [], as: "reply" },
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
      lexemes: [],
      as: "before",
    },
    { turn: turn("user", "I bought the red bike.", "2026-02-03T14:05:00Z"), lexemes: ["bike"] },
    {
      turn: turn("user", long("It was on sale."), "2026-02-03T14:06:00Z"),
      lexemes: [],
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
