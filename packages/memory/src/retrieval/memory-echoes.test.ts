import assert from "node:assert/strict";
import { test } from "node:test";
import type { Turn } from "../store/turns.js";
import { memoryEchoes } from "./memory-echoes.js";

let n = 0;
const turn = (role: Turn["role"], content: string, minute: number): Turn => ({
  eventId: `e${++n}`,
  sessionId: "s",
  role,
  source: role,
  content,
  occurredAt: new Date(Date.UTC(2026, 0, 1, 9, minute)),
});

test("a reply repeating an earlier turn word for word, or memory's rendering, is an echo", () => {
  const fact = turn("user", "We adopted a retired greyhound called Biscuit in May.", 0);
  const quote = turn("agent", "You said: we adopted a retired greyhound called Biscuit in May!", 5);
  const rendered = turn("agent", "[2026-01-01 09:00] User: We adopted a greyhound", 6);
  const laterLine = turn("agent", "Earlier: [09:07] Agent: greyhounds sleep a lot", 7);
  const answer = turn("agent", "Biscuit sounds lovely.", 1);
  assert.deepEqual(
    [...memoryEchoes([quote, rendered, laterLine, answer, fact])].sort(),
    [quote.eventId, rendered.eventId, laterLine.eventId].sort(),
  );
});

test("short sayings repeated, a user quoting, and a quote said before its original are no echoes", () => {
  const thanks = turn("user", "Thanks, that is really helpful indeed!", 0);
  const thanksBack = turn("agent", "Thanks, that is really helpful indeed! Bye.", 1);
  const short = turn("user", "Sounds good.", 2);
  const shortBack = turn("agent", "Sounds good. See you.", 3);
  const userQuotes = turn("user", "Thanks, that is really helpful indeed! I said that before.", 4);
  const later = turn("user", "It rained all day in Leeds yesterday afternoon.", 9);
  const earlier = turn("agent", "It rained all day in Leeds yesterday afternoon, you'll see.", 8);
  // A user line of 30 characters and more repeated by the agent is a quote of it...
  assert.deepEqual([...memoryEchoes([thanks, thanksBack])], [thanksBack.eventId]);
  // ...but not a short one, not a user's own repeat, not a turn said before the one it contains.
  assert.deepEqual(memoryEchoes([short, shortBack, userQuotes, later, earlier]).size, 0);
});

test("a turn listed twice is not an echo of itself", () => {
  const reply = turn("agent", "A harmless cyst, nothing to remove, the vet said.", 1);
  assert.equal(memoryEchoes([reply, { ...reply }]).size, 0);
});

test("a long reply holding an earlier turn amid its own words, or a turn of two long words, is an echo", () => {
  const fact = turn("user", "Our neighbours would adopt a greyhound if the landlord agreed.", 0);
  const filler = "The weather held all week and the garden needs work. ".repeat(40);
  const long = turn(
    "agent",
    `${filler}You told me: our neighbours would adopt a greyhound if the landlord agreed! ${filler}`,
    1,
  );
  const twoWords = turn("user", "Extraordinarily uncharacteristically", 2);
  const twoBack = turn("agent", "Extraordinarily uncharacteristically, indeed.", 3);
  const reordered = turn(
    "agent",
    "A greyhound, if the landlord agreed, our neighbours would adopt.",
    4,
  );
  const echoes = memoryEchoes([fact, long, twoWords, twoBack, reordered]);
  assert.deepEqual([...echoes].sort(), [long.eventId, twoBack.eventId].sort());
});

test("memory's rendering by a date alone or by a transcript's names is an echo; a log's line is not", () => {
  const names = { user: new Set(["Nicolas"]), agent: new Set(["Vanessa"]) };
  const dated = turn("agent", "From memory: [2026-01-01] User: we adopted a greyhound", 10);
  const named = turn("user", "Look: [2026-01-01 09:00] Nicolas: I went running", 11);
  const later = turn("agent", "And [09:12] Vanessa: nice pace", 12);
  const log = turn("user", "The standup notes: [10:30] Bob: deploy is done", 13);
  assert.deepEqual(
    [...memoryEchoes([dated, named, later, log], names)].sort(),
    [dated.eventId, named.eventId, later.eventId].sort(),
  );
  assert.deepEqual([...memoryEchoes([named, later, log])], []);
});
