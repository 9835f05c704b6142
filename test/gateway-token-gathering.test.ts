import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { connect, type Socket } from "node:net";
import { test } from "node:test";
import { startBrokerService } from "@atrium/broker";
import { storeConnections, testBrokerEnv } from "@atrium/broker/testing";
import { startGatewayService } from "@atrium/gateway";
import { createLogger } from "@atrium/kit";
import { createTestPostgres, needsServer } from "@atrium/kit/testing";

const logger = createLogger({ name: "token-gathering", level: "silent" });

/**
 * Concurrent /v1/token calls travel to a real broker together (GetConnectionTokens), and each is
 * still answered and audited as if alone: its own status and body, its own caller address and user
 * agent in the audit log.
 */
test("concurrent token reads through the gateway: gathered, each answered and audited as alone", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const pg = await createTestPostgres();
  const brokerKey = `broker-${randomBytes(8).toString("hex")}`;
  const brokerEnv = testBrokerEnv({ API_KEYS: brokerKey, TRUSTED_PROXIES: "127.0.0.1/32" });
  const broker = await startBrokerService({ sql: pg.sql, logger, env: brokerEnv });
  const gateway = await startGatewayService({
    logger,
    env: {
      GATEWAY_HOST: "127.0.0.1",
      GATEWAY_REST_PORT: "0",
      GATEWAY_GRPC_PORT: "0",
      BROKER_URL: broker.urls.rest,
      BROKER_GRPC_URL: broker.urls.grpc ?? "",
      BROKER_API_KEY: brokerKey,
      TRUSTED_PROXIES: "127.0.0.1/32",
      CORS_ALLOWED_ORIGINS: "http://localhost",
    },
  });
  t.after(async () => {
    await gateway.stop();
    await broker.stop();
    await pg.drop();
  });

  const provider = (await (
    await fetch(`${broker.urls.rest}/providers`, {
      method: "POST",
      headers: { "x-api-key": brokerKey, "content-type": "application/json" },
      body: JSON.stringify({ name: "keyed", auth_type: "api_key" }),
    })
  ).json()) as { id: string };
  const stored = (id: string, status: string) => ({
    id,
    workspaceId: "w1",
    providerId: provider.id,
    authType: "api_key",
    status,
    credential: { api_key: `key-of-${id}` },
  });
  await storeConnections(pg.sql, brokerEnv.ENCRYPTION_KEY, [
    stored("conn-live", "active"),
    stored("conn-gone", "revoked"),
  ]);

  // Connected first, then written in one synchronous loop: the gateway reads all the requests
  // in one turn of its event loop, as it does under load.
  const reads: [string, number][] = [
    ...Array.from({ length: 12 }, (_, n): [string, number] => ["conn-live", n + 1]),
    ["conn-missing", 50],
    ["conn-gone", 51],
  ];
  const sockets = await Promise.all(
    reads.map(
      () =>
        new Promise<Socket>((resolve) => {
          const socket = connect(Number(new URL(gateway.urls.rest).port), "127.0.0.1", () =>
            resolve(socket),
          );
        }),
    ),
  );
  // Accepted by the gateway before anything is written.
  await new Promise((resolve) => setTimeout(resolve, 200));
  const answered = sockets.map(
    (socket) =>
      new Promise<string>((resolve) => {
        let raw = "";
        socket.on("data", (chunk) => {
          raw += chunk;
        });
        socket.on("end", () => resolve(raw));
      }),
  );
  reads.forEach(([id, n], i) => {
    sockets[i].write(
      `GET /v1/token/${id} HTTP/1.1\r\nhost: gateway\r\nx-forwarded-for: 10.0.0.${n}\r\n` +
        `user-agent: agent-${n}\r\nconnection: close\r\n\r\n`,
    );
  });
  const answers = (await Promise.all(answered)).map((raw) => ({
    status: Number(raw.split(" ")[1]),
    body: JSON.parse(raw.slice(raw.indexOf("\r\n\r\n") + 4)),
  }));
  for (const answer of answers.slice(0, 12)) {
    assert.equal(answer.status, 200);
    assert.equal(answer.body.api_key, "key-of-conn-live");
  }
  assert.equal(answers[12].status, 404);
  assert.equal(answers[13].status, 410);
  assert.deepEqual(answers[13].body, { code: "connection_revoked" });

  const audit = await pg.sql.query<{ caller_ip: string; user_agent: string }>(
    "SELECT caller_ip, user_agent FROM audit_events WHERE event_type = 'token.retrieved'",
  );
  assert.deepEqual(
    audit.rows.map((row) => `${row.caller_ip} ${row.user_agent}`).sort(),
    Array.from({ length: 12 }, (_, n) => `10.0.0.${n + 1} agent-${n + 1}`).sort(),
  );

  // The reads shared broker calls: fewer GetConnectionToken(s) calls than reads.
  const metrics = await (await fetch(`${broker.urls.rest}/metrics`)).text();
  const calls = (operation: string) =>
    [
      ...metrics.matchAll(
        new RegExp(
          `atrium_requests_total\\{[^}]*operation="[^"]*${operation}"[^}]*\\} (\\d+)`,
          "g",
        ),
      ),
    ]
      .map((m) => Number(m[1]))
      .reduce((a, b) => a + b, 0);
  const gathered = calls("GetConnectionTokens");
  assert.ok(gathered >= 1, "concurrent reads went as GetConnectionTokens");
  assert.ok(gathered + calls("GetConnectionToken") < 14, metrics);
});
