// Read-your-writes over many pairs (the end-to-end test runs 100): each fact stored through one
// memory instance and asked about at once, in other words, through another, both on one
// PostgreSQL + Redis; then asked again once every chain check ran. Prints how many searches made
// at once answer otherwise than the same search later (other results, turns, order or scores),
// and how many miss the fact.
//
//   node --conditions=atrium-source --import tsx bench/memory/read-your-writes.ts [pairs=1000]
//   BENCH_RYW_HISTORY=long: each user said 27 things before (test/read-your-writes.ts)
import { randomBytes } from "node:crypto";
import { createTestPostgres, redisUrl } from "@atrium/kit/testing";
import { startTestService, type Transport } from "../../test/memory-service-harness.js";
import { quotesFact, runReadYourWrites } from "../../test/read-your-writes.js";

const pairs = Number(process.argv[2] ?? 1000);
const pg = await createTestPostgres();
const services = [];
try {
  for (let i = 0; i < 2; i++) {
    services.push(await startTestService({ DATABASE_URL: pg.url, REDIS_URL: redisUrl() }));
  }
  const [writer, reader] = services.map(
    (s) => s.transports.find((t) => t.name === "rest") as Transport,
  );
  const started = Date.now();
  const outcomes = await runReadYourWrites({
    writer,
    reader,
    sql: pg.sql,
    tenant: `ryw-${randomBytes(4).toString("hex")}`,
    pairs,
    history: process.env.BENCH_RYW_HISTORY === "long" ? "long" : "short",
  });
  const differ = outcomes.filter(
    (o) => JSON.stringify(o.resultsAtOnce) !== JSON.stringify(o.resultsLater),
  );
  const report = {
    pairs,
    history: process.env.BENCH_RYW_HISTORY === "long" ? "long" : "short",
    searchDiffersFromLater: differ.length,
    bestTurnDiffersFromLater: outcomes.filter((o) => o.atOnce[0] !== o.later[0]).length,
    factMissedAtOnce: outcomes.filter((o) => !quotesFact(o.atOnce, o.pair)).length,
    factMissedLater: outcomes.filter((o) => !quotesFact(o.later, o.pair)).length,
    contextMissedAtOnce: outcomes.filter((o) => !o.contextAtOnce).length,
    contextMissedLater: outcomes.filter((o) => !o.contextLater).length,
    seconds: Math.round((Date.now() - started) / 1000),
  };
  console.log(JSON.stringify(report, null, 2));
} finally {
  for (const s of services) await s.stop();
  await pg.drop();
}
