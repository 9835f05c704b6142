// SearchMemory's hybrid retrieval of this checkout against other checkouts' (`git worktree`s of
// other commits, each with its own node_modules/@atrium links to its packages), on one database
// seeded once per tier, in alternating rounds on the same queries, so that the differences hold
// even while the machine's load moves the absolute figures.
//
//   node --conditions=atrium-source --import tsx bench/memory/search-ab.ts /tmp/atrium-before ...
//   BENCH_TIERS=1000,10000,100000 BENCH_SEARCHES=50 BENCH_ROUNDS=6 (defaults)
//   BENCH_SPEAKERS=1: turns written as a transcript (`Nicolas: ...`, `Vanessa: ...`) and every
//   query naming one of the two, so that the speaker check has a name to look for in each turn
import { resolve } from "node:path";
import { createTestPostgres } from "@atrium/kit/testing";
import * as head from "@atrium/memory";
import { percentile, round } from "../lib/load.js";
import { createBenchSearch, createWordSampler, TURNS_PER_CHAIN } from "./bench-search.js";

const others = process.argv.slice(2);
if (others.length === 0) throw new Error("usage: search-ab.ts <checkout> [<checkout> ...]");
const tiers = (process.env.BENCH_TIERS ?? "1000,10000,100000").split(",").map(Number);
const searches = Number(process.env.BENCH_SEARCHES ?? 50);
const rounds = Number(process.env.BENCH_ROUNDS ?? 6);
const speakers: [string, string] | undefined = process.env.BENCH_SPEAKERS
  ? ["Nicolas", "Vanessa"]
  : undefined;
const trees: [string, typeof head][] = [["this checkout", head]];
for (const root of others)
  trees.push([root, (await import(resolve(root, "packages/memory/src/index.ts"))) as typeof head]);

const embedder = head.createGloveEmbedder();
const pg = await createTestPostgres({ max: 10 });
const owner = { tenantId: "bench", userId: "bench-user" };

try {
  const bench = await createBenchSearch(pg.sql, embedder, { speakers });
  const querySample = createWordSampler(11);
  for (const tier of tiers) {
    const seedStart = Date.now();
    await bench.seedUpTo(tier);
    const seedSeconds = round((Date.now() - seedStart) / 1000);
    // Each tree's own search code over the same rows; the vector index is rebuilt after seeding.
    const variants = await Promise.all(
      trees.map(async ([name, m]) => {
        const vectorSearch = await m.createVectorSearch({
          sql: pg.sql,
          dimensions: embedder.dimensions,
        });
        const retrieval = m.createRetrieval({
          sql: pg.sql,
          embedder,
          vectorSearch,
          lexical: m.createLexicalSearch(pg.sql),
          mode: "hybrid",
        });
        return { name, retrieval, samples: [] as number[], roundP50: [] as number[] };
      }),
    );
    // A whole round each, not counted: the first variant to search a fresh tier would otherwise
    // pay for reading the tables into the cache alone (its first round's median was 25 % above
    // its others' at 1M turns).
    const warmUp = Array.from({ length: searches }, () => querySample(5));
    for (const v of variants) {
      for (const text of warmUp) await v.retrieval.search({ ...owner, text, limit: 10 });
    }
    for (let r = 0; r < rounds; r++) {
      const queries = Array.from({ length: searches }, (_, i) =>
        speakers ? `${speakers[i % 2]} ${querySample(4)}` : querySample(5),
      );
      // Rotate which goes first, so none always follows another's cache warming.
      const order = variants.map((_, i) => variants[(i + r) % variants.length]);
      for (const v of order) {
        const samples: number[] = [];
        for (const text of queries) {
          const start = process.hrtime.bigint();
          const pages = await v.retrieval.search({ ...owner, text, limit: 10 });
          samples.push(Number(process.hrtime.bigint() - start) / 1e6);
          if (pages.length === 0) throw new Error(`${v.name}: no pages for "${text}"`);
        }
        v.samples.push(...samples);
        samples.sort((a, b) => a - b);
        v.roundP50.push(round(percentile(samples, 50)));
      }
    }
    for (const v of variants) {
      const sorted = [...v.samples].sort((a, b) => a - b);
      console.log(
        JSON.stringify({
          tier,
          turns: tier * TURNS_PER_CHAIN,
          speakers: speakers !== undefined,
          variant: v.name,
          searches: sorted.length,
          p50: round(percentile(sorted, 50)),
          p95: round(percentile(sorted, 95)),
          roundP50: v.roundP50,
          seedSeconds,
        }),
      );
    }
  }
} finally {
  await pg.drop();
}
