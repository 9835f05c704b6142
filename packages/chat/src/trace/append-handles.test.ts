import assert from "node:assert/strict";
import { mkdtemp, readdir, readFile, readlink, rm } from "node:fs/promises";
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

test("keeps at most maxOpen files open and closes idle ones", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "append-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const openInDir = async () => {
    let count = 0;
    for (const fd of await readdir("/proc/self/fd")) {
      const target = await readlink(`/proc/self/fd/${fd}`).catch(() => "");
      if (target.startsWith(dir)) count++;
    }
    return count;
  };
  const files = createAppendHandles({ maxOpen: 3, idleMs: 50 });
  t.after(() => files.close());
  for (let i = 0; i < 6; i++) await files.append(join(dir, `wf${i}`, "s.jsonl"), "line\n");
  assert.equal(await openInDir(), 3);
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(await openInDir(), 0);
  // Closed for being idle, a file is opened again and appended to, not truncated.
  await files.append(join(dir, "wf5", "s.jsonl"), "more\n");
  assert.equal(await readFile(join(dir, "wf5", "s.jsonl"), "utf8"), "line\nmore\n");
});
