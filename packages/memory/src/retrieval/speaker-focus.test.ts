import assert from "node:assert/strict";
import { test } from "node:test";
import type { Turn } from "../store/turns.js";
import { nameAsked, speakerNamed, speakerNames } from "./speaker-focus.js";

const at = new Date("2024-01-05T10:00:00Z");
const turn = (role: Turn["role"], content: string, i: number): Turn => ({
  eventId: `${role}-${i}`,
  sessionId: "s1",
  role,
  source: role,
  content,
  occurredAt: at,
});

// A transcript that names its speakers in every line; the agent side addresses Kate twice.
const transcript = [
  ...Array.from({ length: 12 }, (_, i) => turn("user", `Nicolas: I went running ${i} km`, i)),
  ...Array.from({ length: 12 }, (_, i) =>
    turn("agent", i < 2 ? `Vanessa: Thanks Kate! ${i}` : `Vanessa: nice pace ${i}`, i),
  ),
];

test("a question naming one speaker is about that speaker's turns", () => {
  assert.equal(speakerNamed(["nicola"], transcript), "user");
  assert.equal(speakerNamed(["vanessa"], transcript), "agent");
});

test("both speakers named, a name used only to address someone, or too few turns: no side", () => {
  assert.equal(speakerNamed(["nicola", "vanessa"], transcript), undefined);
  assert.equal(speakerNamed(["kate"], transcript), undefined);
  assert.equal(speakerNamed([], transcript), undefined);
  assert.equal(speakerNamed(["nicola"], transcript.slice(8, 16)), undefined);
});

const names = (found: ReturnType<typeof speakerNames>) =>
  Object.fromEntries(Object.entries(found).map(([role, set]) => [role, [...set].sort()]));

test("each side's names are those opening most of its turns, never a label opening a few", () => {
  assert.deepEqual(names(speakerNames(transcript)), { user: ["Nicolas"], agent: ["Vanessa"] });
  const notes = [
    ...Array.from({ length: 12 }, (_, i) =>
      turn("user", i < 3 ? `Note: buy milk ${i}` : `I went running ${i} km`, i),
    ),
    ...transcript.slice(12),
  ];
  assert.deepEqual(names(speakerNames(notes)), { agent: ["Vanessa"] });
  assert.deepEqual(names(speakerNames(transcript.slice(8, 16))), {});
});

test("two people stored as the user are both its names", () => {
  const oneSide = transcript.map((t) => ({ ...t, role: "user" as const }));
  assert.deepEqual(names(speakerNames(oneSide)), { user: ["Nicolas", "Vanessa"] });
});

test("a name opening turns of both sides gives no names", () => {
  const one = transcript.map((t) => ({ ...t, content: t.content.replace(/^\w+:/, "Kate:") }));
  assert.deepEqual(speakerNames(one), {});
});

test("a question naming one of the transcript's names asks about that name, whatever the sides", () => {
  const names = speakerNames(transcript.map((t) => ({ ...t, role: "user" as const })));
  assert.equal(nameAsked(["hobbi", "nicola"], names), "Nicolas");
  assert.equal(nameAsked(["vanessa"], names), "Vanessa");
  assert.equal(nameAsked(["nicola", "vanessa"], names), undefined);
  assert.equal(nameAsked(["kate"], names), undefined);
  assert.equal(nameAsked(["nicola"], {}), undefined);
});

test("a name misspelt in the question, in a word no message holds, names that speaker", () => {
  const names = { user: new Set(["Fahim Khan"]), agent: new Set(["Muhhamed", "Akib"]) };
  assert.equal(nameAsked(["muhammad", "work"], names, ["Muhammad"]), "Muhhamed");
  assert.equal(nameAsked(["moham"], names, ["Mohammed"]), "Muhhamed");
  assert.equal(nameAsked(["faheem"], names, ["Faheem"]), "Fahim Khan");
  assert.equal(nameAsked(["akim"], names, ["Akim"]), "Akib");
  assert.equal(nameAsked(["aqib"], names, ["Aqib"]), "Akib");
  assert.equal(nameAsked(["muhammad"], names, ["Muhammad's"]), "Muhhamed");
  assert.equal(nameAsked(["nerbaa"], { user: new Set(["Nebraas"]) }, ["Nerbaas"]), "Nebraas");
  // The same word held by some message is a word of the conversation, not a misspelling.
  assert.equal(nameAsked(["muhammad"], names, []), undefined);
  // Other first letters, other consonants, or a word too short to tell are no misspelling.
  assert.equal(nameAsked(["kahim"], names, ["Kahim"]), undefined);
  assert.equal(nameAsked(["famous"], names, ["famous"]), undefined);
  assert.equal(nameAsked(["eli"], { user: new Set(["Emi"]) }, ["Eli"]), undefined);
  // Two people named, one of them misspelt: the question is about both.
  assert.equal(nameAsked(["akib", "muhammad"], names, ["Muhammad"]), undefined);
});
