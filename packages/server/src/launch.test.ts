import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import type { RunningService } from "@atrium/kit";
import { embeddedEnv, startInOrder } from "./launch.js";

function fakeService(name: string, log: string[]): RunningService {
  return {
    name,
    urls: { rest: `http://127.0.0.1/${name}` },
    stop: async () => {
      log.push(`stop ${name}`);
    },
  };
}

test("a service failing to start stops the ones already running, newest first", async () => {
  const log: string[] = [];
  await assert.rejects(
    startInOrder(
      [
        ["memory", async () => fakeService("memory", log)],
        ["broker", async () => fakeService("broker", log)],
        [
          "gateway",
          async () => {
            throw new Error("BROKER_API_KEY is required");
          },
        ],
      ],
      {},
    ),
    /BROKER_API_KEY is required/,
  );
  assert.deepEqual(log, ["stop broker", "stop memory"]);
});

test("embedded defaults: loopback, file blobs and dev keys, with operator variables winning", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "atrium-launch-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const { env, devKeysPath } = await embeddedEnv({ ATRIUM_DATA_DIR: dir, GATEWAY_HOST: "0.0.0.0" });
  assert.equal(devKeysPath, join(dir, "dev.env"));
  assert.equal(env.MEMORY_HOST, "127.0.0.1");
  assert.equal(env.GATEWAY_HOST, "0.0.0.0");
  assert.equal(env.BLOB_STORE_URL, `file://${join(dir, "blobs")}`);
  assert.equal(env.BROKER_API_KEY, env.API_KEYS);
  assert.equal(Buffer.from(env.ENCRYPTION_KEY ?? "", "base64").length, 32);
});
