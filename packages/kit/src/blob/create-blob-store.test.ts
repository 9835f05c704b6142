import assert from "node:assert/strict";
import { test } from "node:test";
import { ConfigError } from "../config/load-config.js";
import { createBlobStore } from "./create-blob-store.js";

test("no BLOB_STORE_URL means no blob store", () => {
  assert.equal(createBlobStore(undefined), undefined);
});

test("s3:// URLs make an S3 store, file:// URLs a filesystem store", () => {
  assert.equal(
    createBlobStore("s3://bucket?endpoint=http://127.0.0.1:4569&region=us-east-1")?.kind,
    "s3",
  );
  assert.equal(
    createBlobStore("s3://bucket?accessKeyId=id&secretAccessKey=secret&forcePathStyle=false")?.kind,
    "s3",
  );
  assert.equal(createBlobStore("file:///var/lib/atrium/blobs")?.kind, "file");
});

test("anything else is refused with a message naming BLOB_STORE_URL", () => {
  for (const url of [
    "",
    "not a url",
    "https://bucket.s3.amazonaws.com",
    "s3://",
    "s3://bucket/prefix",
    "s3://bucket?endpoint=nope",
    "s3://bucket?colour=blue",
    "s3://bucket?accessKeyId=only-the-id",
    "file://relative/dir",
  ]) {
    // A ConfigError: start-up reports it as the one line naming the variable.
    assert.throws(
      () => createBlobStore(url),
      (error: Error) => error instanceof ConfigError && /BLOB_STORE_URL/.test(error.message),
      url,
    );
  }
});

test("the refusal never repeats a secret from the URL", () => {
  assert.throws(
    () => createBlobStore("s3://bucket?secretAccessKey=hunter2&colour=blue&accessKeyId=x"),
    (error: Error) => !error.message.includes("hunter2"),
  );
});
