import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { apiKeyDigestHex, type RunningService } from "@atrium/kit";
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

test("ATRIUM_PORT_OFFSET moves every port, and every URL between services follows", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "atrium-launch-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const { env, gatewayUrl } = await embeddedEnv({
    ATRIUM_DATA_DIR: dir,
    ATRIUM_PORT_OFFSET: "10000",
    MEMORY_GRPC_PORT: "29999",
  });
  assert.equal(env.AGENT_PORT, "18000");
  assert.equal(env.MEMORY_REST_PORT, "18080");
  assert.equal(env.MEMORY_GRPC_PORT, "29999", "a port set on its own is taken as it is");
  assert.equal(env.BROKER_REST_PORT, "18081");
  assert.equal(env.BROKER_GRPC_PORT, "19091");
  assert.equal(env.GATEWAY_REST_PORT, "18082");
  assert.equal(env.GATEWAY_GRPC_PORT, "19092");
  assert.equal(env.MEMORY_URL, "http://127.0.0.1:18080");
  assert.equal(env.MEMORY_GRPC_URL, "http://127.0.0.1:29999");
  assert.equal(env.BROKER_URL, "http://127.0.0.1:18081");
  assert.equal(env.BROKER_GRPC_URL, "http://127.0.0.1:19091");
  assert.equal(env.AGENT_CHAT_URL, "http://127.0.0.1:18000/api/v1");
  assert.equal(env.OAUTH_REDIRECT_URI, "http://localhost:18082/auth/callback");
  assert.equal(env.SAML_ACS_URL, "http://localhost:18081/saml/acs");
  assert.equal(gatewayUrl, "http://127.0.0.1:18082");
});

test("a bad port setting is refused naming the variable", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "atrium-launch-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await assert.rejects(
    embeddedEnv({ ATRIUM_DATA_DIR: dir, ATRIUM_PORT_OFFSET: "60000" }),
    /ATRIUM_PORT_OFFSET must be an integer from 0 to 56443/,
  );
  await assert.rejects(
    embeddedEnv({ ATRIUM_DATA_DIR: dir, AGENT_PORT: "http" }),
    /AGENT_PORT must be an integer from 0 to 65535/,
  );
});

test("the gateway requires keys and the development key has an MCP scope, unless the operator says otherwise", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "atrium-launch-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const { env, devGatewayKey } = await embeddedEnv({ ATRIUM_DATA_DIR: dir });
  assert.equal(env.GATEWAY_REQUIRE_API_KEY, "true");
  assert.ok(devGatewayKey);
  assert.equal(env.GATEWAY_API_KEYS, devGatewayKey);
  assert.deepEqual(JSON.parse(env.GATEWAY_MCP_SCOPES ?? ""), [
    {
      key_sha256: apiKeyDigestHex(devGatewayKey),
      tenant_id: "default",
      user_id: "dev",
      agent_id: "mcp",
      workspace_id: "default",
    },
  ]);
  const own = await embeddedEnv({ ATRIUM_DATA_DIR: dir, GATEWAY_API_KEYS: "mine" });
  assert.equal(own.devGatewayKey, undefined);
  assert.equal(own.env.GATEWAY_API_KEYS, "mine");
  assert.equal(own.env.GATEWAY_MCP_SCOPES, undefined);
  const open = await embeddedEnv({ ATRIUM_DATA_DIR: dir, GATEWAY_REQUIRE_API_KEY: "false" });
  assert.equal(open.env.GATEWAY_REQUIRE_API_KEY, "false");
  assert.equal(open.env.GATEWAY_MCP_SCOPES, undefined);
});
