import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, test } from "node:test";
import {
  createTestPostgres,
  needsServer,
  redisUrl,
  serverAvailable,
  type TestPostgres,
} from "@atrium/kit/testing";
import {
  ok,
  startTestService,
  type TestService,
  type Transport,
} from "./memory-service-harness.js";

/**
 * One tenant sends 20 messages of 1 MiB; another tenant's chain checks still finish within
 * 10 s, and the process stays under 1 GB. On PostgreSQL + Redis (BullMQ), the analysis on its
 * worker thread as in production.
 */
let pg: TestPostgres | undefined;
let svc: TestService | undefined;
const run = randomBytes(4).toString("hex");

before(async () => {
  if (!(await serverAvailable("postgres")) || !(await serverAvailable("redis"))) return;
  pg = await createTestPostgres();
  svc = await startTestService({ DATABASE_URL: pg.url, REDIS_URL: redisUrl(3) });
});
after(async () => {
  await svc?.stop();
  await pg?.drop();
});

const vocabulary = (
  "Alice Bob Carol Berlin Paris Lisbon Acme Globex Initech invoice contract shipment grinder " +
  "espresso roast server cluster deploy rollback latency budget quarter meeting report draft " +
  "review customer ticket priority release schedule warehouse supplier order payment"
).split(" ");

/** Prose of many sentences and names: what makes the tagger slow and memory-hungry. */
function megabyteMessage(seed: number): string {
  const words: string[] = [];
  let length = 0;
  // 1 MiB less room for the JSON around it: the REST body limit is 1 MiB.
  while (length < 1024 * 1024 - 2048) {
    const word = vocabulary[(seed * 7919 + words.length * 104_729) % vocabulary.length];
    const end = words.length % 12 === 11 ? ". " : " ";
    words.push(word + end);
    length += word.length + end.length;
  }
  return words.join("");
}

async function pendingOf(tenant: string): Promise<number> {
  const { rows } = await (pg as TestPostgres).sql.query<{ n: string }>(
    "SELECT count(*) AS n FROM memory_events WHERE tenant_id = $1 AND chain_state = 'pending'",
    [tenant],
  );
  return Number(rows[0].n);
}

test("another tenant's chain checks finish within 10 s while one tenant sends 20 × 1 MiB", async (c) => {
  if (!(await needsServer(c, "postgres")) || !(await needsServer(c, "redis"))) return;
  const rest = svc?.transports.find((x) => x.name === "rest") as Transport;
  let peakRss = process.memoryUsage().rss;
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
  }, 50);
  c.after(() => clearInterval(sampler));

  const heavy = `fair-${run}-heavy`;
  const light = `fair-${run}-light`;
  const heavySession = await ok(rest, "createSession", {
    tenant_id: heavy,
    user_id: "u1",
    agent_id: "a1",
  });
  const lightSession = await ok(rest, "createSession", {
    tenant_id: light,
    user_id: "u1",
    agent_id: "a1",
  });

  const sendHeavy = (async () => {
    for (let i = 0; i < 20; i++) {
      await ok(rest, "storeInteraction", {
        session_id: heavySession.session_id,
        user_message: megabyteMessage(i),
        agent_response: `Noted part ${i}.`,
      });
    }
  })();

  // Once the heavy tenant's chain checks are under way, the light tenant talks.
  while ((await pendingOf(heavy)) === 0) await new Promise((r) => setTimeout(r, 50));
  const topics = ["espresso grinders for light roasts", "a weekend in Lisbon", "the Q3 budget"];
  const checked: number[] = [];
  for (const [i, topic] of topics.entries()) {
    const began = performance.now();
    await ok(rest, "storeInteraction", {
      session_id: lightSession.session_id,
      user_message: `Question ${i}: what do you know about ${topic}?`,
      agent_response: `Answer ${i} about ${topic}.`,
    });
    while ((await pendingOf(light)) > 0) {
      assert.ok(
        performance.now() - began < 10_000,
        `the light tenant's message ${i} was still pending after 10 s`,
      );
      await new Promise((r) => setTimeout(r, 50));
    }
    checked.push(Math.round(performance.now() - began));
  }
  await sendHeavy;
  // The heavy tenant's messages are all chained too, in the end.
  const giveUpAt = Date.now() + 120_000;
  while ((await pendingOf(heavy)) > 0) {
    assert.ok(Date.now() < giveUpAt, "the heavy tenant's messages were not all chained");
    await new Promise((r) => setTimeout(r, 200));
  }
  c.diagnostic(`light tenant's checks finished after ${checked.join(", ")} ms`);
  c.diagnostic(`peak RSS ${Math.round(peakRss / 1024 / 1024)} MB`);
  assert.ok(peakRss < 1024 * 1024 * 1024, `peak RSS ${Math.round(peakRss / 1024 / 1024)} MB`);
});
