import assert from "node:assert/strict";
import { test } from "node:test";
import { type Expectations, notRun, runBlocks, shBlocks, startPlatform } from "./shell-blocks.js";

// README.md is a newcomer's first test: every `sh` block not marked `norun (why)` runs as pasted
// against `atrium start` (how, in shell-blocks.ts).

/** What a block must print, beyond running without an error answer. */
const expectations: Expectations = [
  // Both searches find the stored turn: by its words, and in other words.
  ["context/search", [/("results":\[\{"content":"[^"]*Lisbon[\s\S]*){2}/]],
  ["buf curl", [/"status": "healthy"/]],
  ["chat/stream", [/"type":"step_complete"/]],
  ["ANSWER=", [/"status":"success"/, /"answer":"\[ ?1, ?2, ?3 ?\]"/, /"events":\[/]],
  ["/providers", [/"name":"github"/, /"event_type":"provider\.created"/]],
];

test("every sh block of README.md runs as pasted against atrium start", async (t) => {
  const blocks = await shBlocks("README.md");
  const runnable = blocks.filter((block) => !notRun(block));
  assert.ok(runnable.length >= 5, "README's walkthrough blocks are found");
  assert.ok(blocks.length - runnable.length <= 5, "blocks not run stay few");
  await runBlocks(runnable, await startPlatform(t), expectations);
});
