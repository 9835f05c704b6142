import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { startWebhookReceiver, testBrokerEnv } from "@atrium/broker/testing";
import { createTestPostgres, eventually, needsServer } from "@atrium/kit/testing";
import { verifyWebhook } from "@atrium/sdk";
import { freePort } from "../gateway-tcp-proxy.js";

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** `atrium serve broker` from the build, as deployed: a process that can be killed with -9. */
async function brokerProcess(env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [join(repoRoot, "packages/server/dist/main.js"), "serve", "broker"],
    {
      env: { PATH: process.env.PATH, ...env, LOG_LEVEL: "warn" },
      stdio: ["ignore", "ignore", "inherit"],
    },
  );
  const url = `http://127.0.0.1:${env.BROKER_REST_PORT}/health`;
  await eventually("the broker answers", async () => {
    if (child.exitCode !== null) throw new Error(`broker exited ${child.exitCode}`);
    return (await fetch(url).catch(() => undefined))?.ok === true;
  });
  return child;
}

/**
 * kill -9 between a state change and its delivery: the event is in the outbox, committed with
 * the change, and a broker started afterwards delivers it once with a valid signature.
 */
test("a webhook event survives kill -9 of the broker and arrives once after the restart", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const pg = await createTestPostgres();
  const receiver = await startWebhookReceiver(() => 204);
  // The provider's key check, which a capture passes through before it is stored.
  const userInfo = createServer((_request, response) => response.end("{}"));
  await new Promise<void>((resolve) => userInfo.listen(0, "127.0.0.1", resolve));
  const children: ChildProcess[] = [];
  t.after(async () => {
    for (const child of children) child.kill("SIGKILL");
    userInfo.close();
    await receiver.close();
    await pg.drop();
  });

  const port = await freePort();
  const env = testBrokerEnv({
    DATABASE_URL: pg.url,
    BROKER_HOST: "127.0.0.1",
    BROKER_REST_PORT: String(port),
    BROKER_GRPC_ENABLED: "false",
    WEBHOOK_ALLOW_HTTP_LOOPBACK: "true",
    WEBHOOK_POLL_INTERVAL_MS: "20",
  });
  const call = async (method: string, path: string, body: unknown) => {
    const response = await fetch(`http://127.0.0.1:${port}${path}`, {
      method,
      headers: { "x-api-key": env.API_KEYS, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const json = (await response.json()) as Record<string, string>;
    assert.ok(response.ok, `${path}: ${response.status} ${JSON.stringify(json)}`);
    return json;
  };

  // The first broker changes state but never delivers (its worker is off), then dies.
  const first = await brokerProcess({ ...env, WEBHOOK_DELIVERY: "false" });
  children.push(first);
  const hook = await call("POST", "/webhooks", {
    name: "ops",
    url: `${receiver.url}/hook`,
    event_types: ["connection.created"],
  });
  const provider = await call("POST", "/providers", {
    name: "keyed",
    auth_type: "api_key",
    user_info_endpoint: `http://127.0.0.1:${(userInfo.address() as AddressInfo).port}/me`,
  });
  const connection = await call("POST", "/connections/static", {
    provider_id: provider.id,
    workspace_id: "ws-1",
    api_key: "k-1",
  });
  first.kill("SIGKILL");
  await once(first, "exit");
  const pending = await pg.sql.query<{ status: string }>(
    "SELECT status FROM broker_webhook_deliveries",
  );
  assert.deepEqual(pending.rows, [{ status: "pending" }]);
  assert.equal(receiver.received.length, 0);

  const second = await brokerProcess(env);
  children.push(second);
  await eventually("the event arrives", () => receiver.received.length === 1);
  await eventually("the delivery is recorded", async () => {
    const { rows } = await pg.sql.query<{ status: string }>(
      "SELECT status FROM broker_webhook_deliveries",
    );
    return rows[0]?.status === "delivered";
  });
  const [hit] = receiver.received;
  const event = await verifyWebhook(
    hook.secret,
    {
      "webhook-id": hit.id,
      "webhook-timestamp": hit.timestamp,
      "webhook-signature": hit.signature,
    },
    hit.body,
  );
  assert.equal(event.type, "connection.created");
  assert.equal((event.data as { connection_id?: string }).connection_id, connection.id);
  assert.equal(receiver.received.length, 1, "delivered once");
});
