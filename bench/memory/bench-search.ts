import { randomUUID } from "node:crypto";
import type { Sql } from "@atrium/kit";
import { createVectorSearch, type Embedder, migrateMemory } from "@atrium/memory";
import { percentile } from "../lib/load.js";

const topics = [
  "espresso grinder",
  "hiking boots",
  "tax return",
  "sourdough starter",
  "jazz piano",
  "tomato garden",
  "rust compiler",
  "marathon training",
  "kitchen renovation",
  "python packaging",
  "wedding venue",
  "electric bike",
  "home insurance",
  "sleep schedule",
  "chess openings",
  "camera lenses",
];
const words =
  "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa".split(
    " ",
  );

function syntheticText(i: number): string {
  const t1 = topics[i % topics.length];
  const t2 = topics[(i * 7 + 3) % topics.length];
  return `User asked about ${t1} and ${t2}; notes ${words[i % 16]} ${words[(i >> 4) % 16]} ${words[(i >> 8) % 16]} item ${i}.`;
}

/**
 * One user's chains on one database, grown tier by tier, and SearchMemory's database work timed
 * on them: embed the query, nearest chains (the service's own vector search), fetch summaries.
 */
export async function createBenchSearch(sql: Sql, embedder: Embedder) {
  await migrateMemory(sql);
  let seeded = 0;
  const tenantId = "bench";
  const userId = "bench-user";
  const sessionId = randomUUID();
  let search = await createVectorSearch({ sql, dimensions: embedder.dimensions });

  return {
    get kind() {
      return search.kind;
    },

    async seedUpTo(count: number) {
      const batch = 200;
      while (seeded < count) {
        const n = Math.min(batch, count - seeded);
        const texts = Array.from({ length: n }, (_, i) => syntheticText(seeded + i));
        const vectors = await embedder.embed(texts);
        const params: unknown[] = [];
        const values = texts.map((text, i) => {
          params.push(randomUUID(), text, vectors[i]);
          const p = params.length;
          return `($${p - 2}, '${tenantId}', '${userId}', 'a${(seeded + i) % 3}', '${sessionId}', 'closed', $${p - 1}, $${p - 1}, $${p}::real[], now(), now(), now())`;
        });
        await sql.query(
          `INSERT INTO memory_chains (id, tenant_id, user_id, agent_id, session_id, status, summary, content,
             embedding, last_access_at, first_event_at, last_event_at) VALUES ${values.join(", ")}`,
          params,
        );
        seeded += n;
      }
      // The HNSW path copies new chains into its index when it starts; recreate to backfill.
      search = await createVectorSearch({ sql, dimensions: embedder.dimensions });
      await sql.query("ANALYZE memory_chains");
    },

    /** The first search after new chains pays the catch-up (exact path: loading them). */
    async warmUp(): Promise<number> {
      const start = process.hrtime.bigint();
      const [embedding] = await embedder.embed(["warm up"]);
      await search.search({ tenantId, userId, embedding, limit: 10 });
      return Math.round(Number(process.hrtime.bigint() - start) / 1e4) / 100;
    },

    async measure(count: number) {
      const samples: number[] = [];
      for (let i = 0; i < count; i++) {
        const query = `which ${topics[(i * 5) % topics.length]} did I talk about`;
        const start = process.hrtime.bigint();
        const [embedding] = await embedder.embed([query]);
        const hits = await search.search({ tenantId, userId, embedding, limit: 10 });
        await sql.query(
          "SELECT id, summary, last_event_at FROM memory_chains WHERE id = ANY($1::uuid[])",
          [hits.map((h) => h.chainId)],
        );
        samples.push(Number(process.hrtime.bigint() - start) / 1e6);
        if (hits.length !== 10) throw new Error(`expected 10 hits, got ${hits.length}`);
      }
      samples.sort((a, b) => a - b);
      const r = (x: number) => Math.round(x * 100) / 100;
      return { p50: r(percentile(samples, 50)), p95: r(percentile(samples, 95)) };
    },
  };
}
