import assert from "node:assert/strict";
import { mkdtemp, rm, unlink, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { Code } from "../errors.js";
import { createLogger } from "../logger/logger.js";
import { eventually } from "../testing/eventually.js";
import { apiKeyAuthenticator, apiKeyRejection, createApiKeySet } from "./api-key-set.js";
import type { AuthenticationError } from "./authentication-error.js";

test("keys from the environment and from files; comments, commas and padding", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "api-keys-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, "keys");
  await writeFile(file, "# rotated monthly\nfile-key-1, file-key-2\n\n  file-key-3  # ops\n");
  const keys = createApiKeySet({ keys: ["env-key"], files: [file], reloadMs: 50 });
  await keys.load();
  assert.equal(keys.size(), 4);
  for (const key of ["env-key", "file-key-1", "file-key-2", " file-key-3 "]) {
    assert.equal(keys.check(key), "ok", key);
  }
  assert.equal(keys.check("file-key"), "wrong");
  assert.equal(keys.check("# rotated monthly"), "wrong");
  assert.equal(keys.check(""), "missing");
  assert.equal(keys.check("   "), "missing");
  assert.equal(keys.check(undefined), "missing");
});

test("a changed file is re-read; one that cannot be read keeps the last keys", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "api-keys-"));
  const file = join(dir, "keys");
  await writeFile(file, "old-key\n");
  const warnings: string[] = [];
  const logger = createLogger({ name: "keys", destination: { write: (l) => warnings.push(l) } });
  const keys = createApiKeySet({ keys: [], files: [file], reloadMs: 20, logger });
  t.after(async () => {
    keys.stop();
    await rm(dir, { recursive: true, force: true });
  });
  await keys.load();
  keys.start();

  await writeFile(file, "new-key\n");
  // A later modification time, even on a file system with coarse timestamps.
  await utimes(file, new Date(), new Date(Date.now() + 5_000));
  await eventually("the new key is in", () => keys.check("new-key") === "ok");
  assert.equal(keys.check("old-key"), "wrong");

  await unlink(file);
  await eventually("the vanished file was reported", () =>
    warnings.some((line) => JSON.parse(line).file === file),
  );
  assert.equal(keys.check("new-key"), "ok", "keys survive a file that cannot be read");
});

test("a load that cannot read a file fails, so a service does not start without its keys", async () => {
  const keys = createApiKeySet({ keys: [], files: ["/nonexistent/keys"], reloadMs: 1000 });
  await assert.rejects(keys.load(), /ENOENT/);
});

test("missing is 401 everywhere; wrong is what the service's contract says", () => {
  assert.equal(apiKeyRejection("ok", Code.PermissionDenied), undefined);
  assert.equal(apiKeyRejection("missing", Code.PermissionDenied)?.code, Code.Unauthenticated);
  assert.equal(apiKeyRejection("wrong", Code.PermissionDenied)?.code, Code.PermissionDenied);
  assert.equal(apiKeyRejection("wrong", Code.Unauthenticated)?.code, Code.Unauthenticated);
});

test("the Bearer form is read only where the service accepts it, and X-API-Key goes first", async () => {
  const keys = createApiKeySet({ keys: ["the-key"], files: [], reloadMs: 0 });
  const verdict = async (acceptBearer: boolean, headers: Record<string, string>) => {
    const check = apiKeyAuthenticator({ keys, wrongKey: Code.Unauthenticated, acceptBearer });
    try {
      await check.authenticate({ headers: new Headers(headers), clientCertificateVerified: false });
      return "ok";
    } catch (error) {
      return (error as AuthenticationError).rawMessage;
    }
  };
  assert.equal(await verdict(true, { authorization: " Bearer the-key " }), "ok");
  assert.equal(await verdict(true, { authorization: "Bearer other" }), "invalid API key");
  assert.equal(await verdict(true, { authorization: "JWT the-key" }), "missing API key");
  assert.equal(
    await verdict(true, { "x-api-key": "other", authorization: "Bearer the-key" }),
    "invalid API key",
  );
  assert.equal(await verdict(false, { authorization: "Bearer the-key" }), "X-API-Key is required");
  assert.equal(await verdict(false, { "x-api-key": "the-key" }), "ok");
});
