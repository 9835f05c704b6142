// Webhook benchmark: what writing an event costs inside a state change's transaction (beside the
// same transaction with its audit row only), and the outbox drained by two broker instances on one database
// into a loopback receiver (beside this process POSTing the same bodies straight to it, same run).
// Prints a table and writes bench/results/webhooks.json.
//
//   node --conditions=atrium-source --import tsx bench/webhooks/webhooks-bench.ts
//   BENCH_EVENTS=5000 (default)
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { startBrokerService } from "@atrium/broker";
import { createLogger, createPostgresSql, type SqlExecutor } from "@atrium/kit";
import { createTestPostgres } from "@atrium/kit/testing";
import { SYSTEM_CALLER, writeAuditEvent } from "../../packages/broker/src/audit/audit-log.js";
import { enqueueWebhookEvent } from "../../packages/broker/src/webhooks/webhook-events.js";
import { round, sequential } from "../lib/load.js";

const events = Number(process.env.BENCH_EVENTS ?? 5_000);
const concurrency = 50;

async function startReceiver() {
  const ids = new Map<string, number>();
  let posts = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      posts++;
      const id = String(req.headers["webhook-id"] ?? "");
      if (id) ids.set(id, (ids.get(id) ?? 0) + 1);
      res.statusCode = 204;
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    posts: () => posts,
    distinct: () => ids.size,
    duplicated: () => [...ids.values()].filter((n) => n > 1).length,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(r);
      }),
  };
}

async function main() {
  const pg = await createTestPostgres({ max: 10 });
  const second = await createPostgresSql({ url: pg.url, max: 10 });
  const receiver = await startReceiver();
  const env = {
    ENCRYPTION_KEY: randomBytes(32).toString("base64"),
    STATE_KEY: randomBytes(32).toString("hex"),
    API_KEYS: `bench-${randomBytes(8).toString("hex")}`,
    BROKER_HOST: "127.0.0.1",
    BROKER_REST_PORT: "0",
    BROKER_GRPC_ENABLED: "false",
    REFRESH_LOOP: "false",
    WEBHOOK_DELIVERY: "false",
    WEBHOOK_ALLOW_HTTP_LOOPBACK: "true",
  };
  const logger = createLogger({ name: "broker", level: "warn" });
  const a = await startBrokerService({ env, logger, sql: pg.sql });
  const b = await startBrokerService({ env, logger, sql: second });
  try {
    const created = await fetch(`${a.urls.rest}/webhooks`, {
      method: "POST",
      headers: { "x-api-key": env.API_KEYS, "content-type": "application/json" },
      body: JSON.stringify({
        name: "bench",
        url: receiver.url,
        event_types: ["connection.revoked"],
      }),
    });
    if (!created.ok) throw new Error(`subscription: ${created.status} ${await created.text()}`);
    const data = (n: number) => ({
      connection_id: `conn-${n}`,
      workspace_id: "bench",
      provider_id: "prov",
      reason: "bench",
      provider_revoked: true,
    });

    // 1. The cost of the outbox row in a state change's transaction (which always writes its audit
    // row), beside the same transaction without it.
    const audit = (tx: SqlExecutor, n: number) =>
      writeAuditEvent(tx, {
        eventType: "connection.revoked",
        resourceId: `conn-${n}`,
        caller: SYSTEM_CALLER,
        data: data(n),
      });
    const bare = await sequential(2_000, (n) => pg.sql.transaction((tx) => audit(tx, n)));
    const withEvent = await sequential(2_000, (n) =>
      pg.sql.transaction(async (tx) => {
        await audit(tx, n);
        await enqueueWebhookEvent(tx, "connection.revoked", data(n));
      }),
    );
    await pg.sql.query("DELETE FROM broker_webhook_deliveries");

    // 2. Reference: this process POSTing the same bodies straight to the receiver.
    const body = JSON.stringify({
      type: "connection.revoked",
      timestamp: new Date().toISOString(),
      data: data(0),
    });
    let next = 0;
    const directStart = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next++ < events) {
          const response = await fetch(receiver.url, { method: "POST", body });
          await response.body?.cancel();
        }
      }),
    );
    const directSeconds = (performance.now() - directStart) / 1000;

    // 3. The outbox drained by both instances' workers, passes racing over the same rows.
    for (let n = 0; n < events; n += 500) {
      await pg.sql.transaction(async (tx) => {
        for (let i = n; i < Math.min(events, n + 500); i++) {
          await enqueueWebhookEvent(tx, "connection.revoked", data(i));
        }
      });
    }
    const drainStart = performance.now();
    const drain = async (instance: typeof a) => {
      let delivered = 0;
      for (;;) {
        const pass = await instance.webhookWorker.runOnce();
        delivered += pass.delivered;
        if (pass.claimed === 0) return delivered;
      }
    };
    const [byA, byB] = await Promise.all([drain(a), drain(b)]);
    const drainSeconds = (performance.now() - drainStart) / 1000;
    const pending = await pg.sql.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM broker_webhook_deliveries WHERE status <> 'delivered'",
    );

    const result = {
      machine_note: "2 cores shared with other work; compare rows of the same run only",
      events,
      transaction_p50_ms: { without_event: round(bare.p50), with_event: round(withEvent.p50) },
      transaction_p99_ms: { without_event: round(bare.p99), with_event: round(withEvent.p99) },
      outbox_delivery: {
        seconds: round(drainSeconds),
        deliveries_per_second: round(events / drainSeconds),
        delivered_by_instance_a: byA,
        delivered_by_instance_b: byB,
        received_distinct: receiver.distinct(),
        received_twice_or_more: receiver.duplicated(),
        not_delivered: pending.rows[0].n,
      },
      reference_direct_post: {
        concurrency,
        seconds: round(directSeconds),
        posts_per_second: round(events / directSeconds),
      },
    };
    console.table({
      "audit row only (ms)": {
        p50: result.transaction_p50_ms.without_event,
        p99: result.transaction_p99_ms.without_event,
      },
      "audit row + outbox row (ms)": {
        p50: result.transaction_p50_ms.with_event,
        p99: result.transaction_p99_ms.with_event,
      },
    });
    console.table({
      "outbox, 2 instances": {
        per_second: result.outbox_delivery.deliveries_per_second,
        seconds: result.outbox_delivery.seconds,
      },
      "direct POST (reference)": {
        per_second: result.reference_direct_post.posts_per_second,
        seconds: result.reference_direct_post.seconds,
      },
    });
    console.log(JSON.stringify(result.outbox_delivery, null, 2));
    mkdirSync("bench/results", { recursive: true });
    writeFileSync("bench/results/webhooks.json", `${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await a.stop();
    await b.stop();
    await second.close();
    await receiver.close();
    await pg.drop();
  }
}

await main();
