import assert from "node:assert/strict";
import { mkdtemp, readdir, rm, stat, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { type GloveTable, loadGloveTable } from "./glove-table.js";

const bytes = (array: Float32Array | Float64Array) =>
  Buffer.from(array.buffer, array.byteOffset, array.byteLength);

function assertSameTable(actual: GloveTable, expected: GloveTable) {
  assert.equal(actual.dimensions, expected.dimensions);
  assert.deepEqual(actual.words, expected.words);
  assert.ok(bytes(actual.matrix).equals(bytes(expected.matrix)), "the vectors, bit for bit");
  assert.ok(bytes(actual.weights).equals(bytes(expected.weights)), "the weights, bit for bit");
  assert.deepEqual(actual.common, expected.common);
}

test("the prepared table is written once and read back bit for bit; a damaged file is prepared again", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "glove-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const prepared = loadGloveTable({ vocabulary: 3000, cacheDir: dir });
  assert.equal(prepared.words.length, 3000);
  assert.equal(prepared.matrix.length, 3000 * prepared.dimensions);
  const [file, ...others] = await readdir(dir);
  assert.deepEqual(others, [], "one file, no partial one left behind");
  assert.match(file, /^glove-[\d.]+-subtlex-[\d.]+-3000-v\d+\.bin$/);

  assertSameTable(loadGloveTable({ vocabulary: 3000, cacheDir: dir }), prepared);

  const size = (await stat(join(dir, file))).size;
  await truncate(join(dir, file), size - 100);
  assertSameTable(loadGloveTable({ vocabulary: 3000, cacheDir: dir }), prepared);
  assert.equal((await stat(join(dir, file))).size, size, "the damaged file is rewritten");
});

test("a table that cannot be kept is prepared and used all the same", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "glove-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  // A file where the directory should be: nothing can be written under it.
  await writeFile(join(dir, "not-a-directory"), "");
  const table = loadGloveTable({ vocabulary: 1000, cacheDir: join(dir, "not-a-directory") });
  assert.equal(table.words.length, 1000);
  assert.deepEqual(await readdir(dir), ["not-a-directory"]);
});
