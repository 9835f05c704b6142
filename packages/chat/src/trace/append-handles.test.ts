import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { createAppendHandles } from "./append-handles.js";

test("appends through reused handles, creates directories, survives eviction", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "append-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const files = createAppendHandles({ maxOpen: 3 });
  t.after(() => files.close());
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < 5; i++) await files.append(join(dir, `wf${i}`, "s.jsonl"), `${round}\n`);
  }
  for (let i = 0; i < 5; i++) {
    assert.equal(await readFile(join(dir, `wf${i}`, "s.jsonl"), "utf8"), "0\n1\n2\n");
  }
  // Once its handle is closed, a removed directory is created again on the next write.
  await files.close();
  await rm(join(dir, "wf0"), { recursive: true });
  await files.append(join(dir, "wf0", "s.jsonl"), "again\n");
  assert.equal(await readFile(join(dir, "wf0", "s.jsonl"), "utf8"), "again\n");
});

test("close waits for the write in flight", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "append-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const files = createAppendHandles();
  const path = join(dir, "wf", "s.jsonl");
  await files.append(path, "first\n");
  // Long enough that closing the descriptor alone would finish first.
  const text = `${"x".repeat(32 * 1024 * 1024)}\n`;
  let appended = false;
  const appending = files.append(path, text).then(() => {
    appended = true;
  });
  await files.close();
  assert.ok(appended, "close resolved while a write was still in flight");
  await appending;
  assert.equal(await readFile(path, "utf8"), `first\n${text}`);
});
