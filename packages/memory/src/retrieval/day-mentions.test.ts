import assert from "node:assert/strict";
import { test } from "node:test";
import { daysNamed, daysSpokenOf } from "./day-mentions.js";

const now = new Date("2026-11-26T12:00:00Z");

test("a question's named days: written out, day-first dotted, not bounds", () => {
  assert.deepEqual(daysNamed("What happened to Elise on 5 January 2024?", now), ["2024-01-05"]);
  assert.deepEqual(daysNamed("Which book did Paola start to read on 09.01.2024?", now), [
    "2024-01-09",
  ]);
  assert.deepEqual(daysNamed("What kind of pasta did Kate make on 29 Dec 2023?", now), [
    "2023-12-29",
  ]);
  assert.deepEqual(daysNamed("Did Vanessa take the test before December 23rd, 2023?", now), []);
  assert.deepEqual(daysNamed("What does Kate do for work?", now), []);
});

test("a turn speaks of the day it was said on and of the days its relative times resolve to", () => {
  const said = new Date("2024-01-06T09:00:00Z"); // a Saturday
  assert.deepEqual(daysSpokenOf("Yesterday was rough", said), ["2024-01-06", "2024-01-05"]);
  assert.ok(daysSpokenOf("We met last Friday at the cafe", said).includes("2024-01-05"));
  assert.deepEqual(daysSpokenOf("Sounds good!", said), ["2024-01-06"]);
  assert.ok(daysSpokenOf("See you tomorrow", said).includes("2024-01-07"));
});
