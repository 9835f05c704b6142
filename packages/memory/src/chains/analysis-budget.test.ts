import assert from "node:assert/strict";
import { test } from "node:test";
import {
  analysisText,
  CHAIN_ANALYSIS_CHARS,
  leadingPart,
  MESSAGE_ANALYSIS_CHARS,
} from "./analysis-budget.js";

test("a short chain is analysed whole", () => {
  const content = "User: Where is the Berlin office?\nAgent: In Kreuzberg.";
  assert.equal(analysisText(content), content);
});

test("each message of a chain is analysed by its leading part", () => {
  const pasted = `User: Here is the log: ${"error at line 7 ".repeat(100_000)}`;
  const content = `${pasted}\nAgent: The log repeats one error.\nUser: Which line?`;
  const text = analysisText(content);
  const [first, second, third] = text.split("\n");
  assert.ok(first.startsWith("User: Here is the log: error at line 7"));
  assert.ok(first.length <= MESSAGE_ANALYSIS_CHARS + 1 && first.endsWith("…"), `${first.length}`);
  assert.equal(second, "Agent: The log repeats one error.");
  assert.equal(third, "User: Which line?");
});

test("a chain's analysis text stays within its budget however many long messages it has", () => {
  const message = (i: number) => `User: message ${i} ${"word ".repeat(300_000)}`;
  const content = Array.from({ length: 20 }, (_, i) => message(i)).join("\n");
  const text = analysisText(content);
  assert.ok(text.length <= CHAIN_ANALYSIS_CHARS + 1, `${text.length}`);
  assert.ok(text.startsWith("User: message 0 word"));
  assert.match(text, /\nUser: message 3 word/);
});

test("the leading part ends at a word when one is near", () => {
  assert.equal(leadingPart("alpha beta gamma", 100), "alpha beta gamma");
  assert.equal(leadingPart("alpha beta gamma delta", 13), "alpha beta…");
  assert.equal(leadingPart("x".repeat(50), 10), `${"x".repeat(10)}…`);
});
