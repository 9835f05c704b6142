import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { ensureDevKeys } from "./dev-keys.js";

test("first run writes dev.env with 0600 and a 32-byte encryption key; later runs reuse it", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "atrium-devkeys-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const first = await ensureDevKeys(dir);
  assert.equal(first.created, true);
  assert.equal(first.path, join(dir, "dev.env"));
  assert.equal((await stat(first.path)).mode & 0o777, 0o600);
  assert.equal(Buffer.from(first.keys.ENCRYPTION_KEY, "base64").length, 32);
  const second = await ensureDevKeys(dir);
  assert.equal(second.created, false);
  assert.deepEqual(second.keys, first.keys);
  assert.match(await readFile(first.path, "utf8"), /^API_KEYS=dev_[0-9a-f]{48}$/m);
});

test("a dev.env missing a key is refused instead of regenerated", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "atrium-devkeys-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, "dev.env"), "ENCRYPTION_KEY=abc\n");
  await assert.rejects(ensureDevKeys(dir), /lacks STATE_KEY, API_KEYS/);
});

test("a dev.env from before the gateway key gets one appended, the other keys untouched", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "atrium-devkeys-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const old = "ENCRYPTION_KEY=e\nSTATE_KEY=s\nAPI_KEYS=dev_old";
  await writeFile(join(dir, "dev.env"), old);
  const keys = await ensureDevKeys(dir);
  assert.match(keys.keys.GATEWAY_API_KEYS, /^gw_dev_[0-9a-f]{48}$/);
  assert.equal(keys.keys.API_KEYS, "dev_old");
  assert.equal(
    await readFile(join(dir, "dev.env"), "utf8"),
    `${old}\nGATEWAY_API_KEYS=${keys.keys.GATEWAY_API_KEYS}\n`,
  );
  assert.deepEqual((await ensureDevKeys(dir)).keys, keys.keys);
});
