import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";
import { Code } from "../errors.js";
import { blobContract } from "../testing/blob-contract.js";
import { createFileBlobStore } from "./file-blob-store.js";

async function temporaryRoot(t: { after(fn: () => Promise<void>): void }): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), "atrium-blob-"));
  t.after(() => rm(root, { recursive: true, force: true }));
  return root;
}

blobContract("file", async (t) => {
  const root = await temporaryRoot(t);
  return {
    store: createFileBlobStore({ root }),
    outsideUri: pathToFileURL(join(root, "..", "elsewhere", "blob")).href,
  };
});

test("keys map to files under the root", async (t) => {
  const root = await temporaryRoot(t);
  const store = createFileBlobStore({ root });
  const stored = await store.put("a/b.txt", Buffer.from("hello"), "text/plain");
  assert.equal(stored.uri, pathToFileURL(join(root, "a", "b.txt")).href);
  assert.equal(await readFile(join(root, "a", "b.txt"), "utf8"), "hello");
});

test("the store's own directory is not a key", async (t) => {
  const store = createFileBlobStore({ root: await temporaryRoot(t) });
  await assert.rejects(
    store.put(".atrium/content-types/x", Buffer.from("x"), "text/plain"),
    (error: { code?: Code }) => error.code === Code.InvalidArgument,
  );
});
