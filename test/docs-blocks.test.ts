import assert from "node:assert/strict";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import {
  type Block,
  type Expectations,
  notRun,
  repoRoot,
  runBlocks,
  shBlocks,
  startPlatform,
} from "./shell-blocks.js";

// Every `sh` block of docs/*.md not marked `norun (why)` runs as pasted against one
// `atrium start`, file by file in name order, each file's blocks in one terminal (how, in
// shell-blocks.ts). A block for a deployment (Docker, Kubernetes), another language's toolchain
// or a service started in the foreground says why it is not run.

/** What a block must print, beyond running without an error answer. */
const expectations: Expectations = [
  ["/openapi.json", [/"openapi"/]],
  ["redocly lint", [/Woohoo! Your API descriptions? (is|are) valid/]],
  ["--list-methods", [/grpc\.health\.v1\.Health\/Check/, /"status": "SERVING"/]],
  ["big.json", [/resource_exhausted/i, /"timestamp/]],
  ["/providers -d", [/"name":"acme"|"name":"github"/]],
  ["chat/workflows?limit", [/"workflows":\[/]],
  ["this.constructor.constructor", [/ReferenceError: 'process' is not defined/]],
  ["operator/search", [/"results":\[/]],
  ["context/search", [/"results":\[\{"content":"[^"]*Bob Miller/]],
  ["/forget", [/"success":true/]],
  ["sha256sum", [/^[0-9a-f]{64} {2}-$/m]],
  ["/webhooks -d", [/"secret":"whsec_/]],
  ["rotate-secret", [/"previous_secret_expires_at"/]],
];

test("every runnable sh block of docs/*.md runs as pasted against atrium start", async (t) => {
  const files = (await readdir(join(repoRoot, "docs"))).filter((name) => name.endsWith(".md"));
  const byFile: Block[][] = [];
  let all = 0;
  for (const name of files.sort()) {
    const blocks = await shBlocks(`docs/${name}`);
    all += blocks.length;
    byFile.push(blocks.filter((block) => !notRun(block)));
  }
  const runnable = byFile.flat().length;
  assert.ok(runnable >= 20, `the docs' runnable blocks are found (${runnable} of ${all})`);
  const platform = await startPlatform(t);
  for (const blocks of byFile) {
    if (blocks.length > 0)
      await t.test(blocks[0].file, () => runBlocks(blocks, platform, expectations));
  }
});
