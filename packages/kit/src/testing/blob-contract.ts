import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { describe, type TestContext, test } from "node:test";
import type { BlobStore } from "../blob/blob.js";
import { Code } from "../errors.js";

/**
 * Opens the store for one test, or returns undefined when the test was skipped. `outsideUri`
 * is a URI of the same scheme that this store does not own.
 */
export type OpenBlobStore = (
  t: TestContext,
) => Promise<{ store: BlobStore; outsideUri: string } | undefined>;

const withCode = (code: Code) => (error: unknown) => (error as { code?: Code }).code === code;

/** The behaviour every BlobStore adapter must share; each adapter's test file runs it. */
export function blobContract(adapter: string, open: OpenBlobStore): void {
  describe(`BlobStore contract (${adapter})`, () => {
    const prefix = `contract-${randomUUID()}`;

    test("put, get and delete round-trip bytes and content type", async (t) => {
      const opened = await open(t);
      if (!opened) return;
      const { store } = opened;
      const body = Uint8Array.from({ length: 256 }, (_, i) => i);
      const stored = await store.put(`${prefix}/nested/dir/bytes.bin`, body, "application/x-test");
      assert.equal(stored.size, 256);
      assert.ok(stored.uri.startsWith(`${store.kind}://`), stored.uri);
      const fetched = await store.get(stored.uri);
      assert.deepEqual(new Uint8Array(fetched.body), body);
      assert.equal(fetched.contentType, "application/x-test");

      const replaced = await store.put(
        `${prefix}/nested/dir/bytes.bin`,
        Buffer.from("{}"),
        "application/json",
      );
      assert.equal(replaced.uri, stored.uri);
      const refetched = await store.get(stored.uri);
      assert.equal(Buffer.from(refetched.body).toString(), "{}");
      assert.equal(refetched.contentType, "application/json");

      await store.delete(stored.uri);
      await assert.rejects(store.get(stored.uri), withCode(Code.NotFound));
      await store.delete(stored.uri);
    });

    test("an empty blob and a key with spaces and unicode survive", async (t) => {
      const opened = await open(t);
      if (!opened) return;
      const { store } = opened;
      const stored = await store.put(`${prefix}/a name é ü.txt`, new Uint8Array(), "text/plain");
      assert.equal(stored.size, 0);
      const fetched = await store.get(stored.uri);
      assert.equal(fetched.body.byteLength, 0);
      assert.equal(fetched.contentType, "text/plain");
      await store.delete(stored.uri);
    });

    test("a missing blob is NotFound", async (t) => {
      const opened = await open(t);
      if (!opened) return;
      const { store } = opened;
      const stored = await store.put(`${prefix}/probe`, new Uint8Array([1]), "text/plain");
      await store.delete(stored.uri);
      await assert.rejects(
        store.get(stored.uri.replace(/probe$/, "never-written")),
        withCode(Code.NotFound),
      );
    });

    test("keys that could escape or mean different things are rejected", async (t) => {
      const opened = await open(t);
      if (!opened) return;
      const { store } = opened;
      const body = new Uint8Array([1]);
      for (const key of [
        "",
        "../escape",
        "a/../../escape",
        "/etc/passwd",
        "a//b",
        "./a",
        "a/.",
        "a\\..\\b",
      ]) {
        await assert.rejects(
          store.put(key, body, "text/plain"),
          withCode(Code.InvalidArgument),
          key,
        );
      }
    });

    test("URIs outside the store are rejected", async (t) => {
      const opened = await open(t);
      if (!opened) return;
      const { store, outsideUri } = opened;
      await assert.rejects(store.get(outsideUri), withCode(Code.InvalidArgument));
      await assert.rejects(store.delete(outsideUri), withCode(Code.InvalidArgument));
      await assert.rejects(store.get("https://example.com/blob"), withCode(Code.InvalidArgument));
    });

    test("ping answers", async (t) => {
      const opened = await open(t);
      if (!opened) return;
      await opened.store.ping();
    });
  });
}
