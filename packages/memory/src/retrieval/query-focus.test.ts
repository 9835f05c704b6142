import assert from "node:assert/strict";
import { test } from "node:test";
import type { Embedder } from "../embeddings/embedder.js";
import { focusQuery, holdsFormOf, isOneOf } from "./query-focus.js";

/** Records what it embeds; every vector is the text's length. */
function recordingEmbedder() {
  const seen: string[] = [];
  const embedder: Embedder = {
    model: "test",
    dimensions: 1,
    semantic: true,
    async embed(texts) {
      seen.push(...texts);
      return texts.map((t) => [t.length]);
    },
  };
  return { embedder, seen };
}

// "elis" is in half of the user's 1,000 turns: a speaker's name; "sunset" in 3.
const terms = {
  total: 1000,
  averageLength: 8,
  terms: [
    { lexeme: "sunset", idf: 5.8, documents: 3 },
    { lexeme: "elis", idf: 0.7, documents: 500 },
  ],
};

test("a name in most turns is left out of the query's vector and of the turns compared to it", async () => {
  const { embedder, seen } = recordingEmbedder();
  const focus = await focusQuery(embedder, "Did Elise paint the sunset?", terms, [0]);
  assert.deepEqual(seen, ["Did  paint the sunset?"]);
  assert.deepEqual(focus.vector, ["Did  paint the sunset?".length]);
  assert.equal(focus.strip("elise: Agreed!"), ": Agreed!");
  assert.equal(focus.strip("Elisabeth said so"), "Elisabeth said so", "another word kept");
});

test("a query of common words only, or of rare words only, is embedded as it is", async () => {
  const { embedder, seen } = recordingEmbedder();
  const onlyCommon = { ...terms, terms: [terms.terms[1]] };
  const focus = await focusQuery(embedder, "Elise?", onlyCommon, [42]);
  assert.deepEqual(focus.vector, [42]);
  assert.equal(focus.strip("elise: hi"), "elise: hi");
  const onlyRare = { ...terms, terms: [terms.terms[0]] };
  assert.deepEqual((await focusQuery(embedder, "sunset", onlyRare, [7])).vector, [7]);
  assert.deepEqual(seen, []);
});

test("a text holds a form of a lexeme where one of its words is one, as isOneOf says of words", () => {
  const texts = [
    "Elise: Agreed!",
    "Thanks ELISE's dog",
    "Elisabeth said so",
    "Marielise said so",
    "elis",
    "the café élise",
    "Sunset, then elise.",
  ];
  const holds = holdsFormOf("elis");
  for (const text of texts) {
    const byWords = (text.match(/[\p{L}\p{N}']+/gu) ?? []).some((w) => isOneOf(w, ["elis"]));
    assert.equal(holds(text), byWords, text);
  }
  assert.equal(holdsFormOf("elis")("Thanks ELISE's dog"), true);
  assert.equal(holdsFormOf("elis")("Elisabeth said so"), false, "more than an ending added");
  assert.equal(holdsFormOf("elis")("Marielise said so"), false, "not at a word's start");
  assert.equal(holdsFormOf("example.com")("see exampleXcom"), false, "the lexeme is literal");
});
