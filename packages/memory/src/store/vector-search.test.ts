import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { test } from "node:test";
import { createPgliteSql, type Sql } from "@atrium/kit";
import { createTestPostgres, needsServer } from "@atrium/kit/testing";
import { createHashEmbedder } from "../embeddings/hash-embedder.js";
import { testChain } from "../testing/chain-record.js";
import { chainStore } from "./chains.js";
import { migrateMemory } from "./migrate.js";
import { createVectorSearch, type VectorSearch } from "./vector-search.js";

const embedder = createHashEmbedder();
const topics = [
  "hiking boots",
  "tax returns",
  "sourdough bread",
  "rust compiler",
  "jazz piano",
  "garden tomatoes",
];

/** 120 chains of user u1 (two agents), a few of user u2 and of another tenant. */
async function seed(sql: Sql, search: VectorSearch[]): Promise<void> {
  const owners = [
    ...Array.from({ length: 120 }, (_, i) => ({
      tenantId: "t1",
      userId: "u1",
      agentId: i % 2 ? "a1" : "a2",
      i,
    })),
    ...Array.from({ length: 10 }, (_, i) => ({ tenantId: "t1", userId: "u2", agentId: "", i })),
    ...Array.from({ length: 10 }, (_, i) => ({ tenantId: "t2", userId: "u1", agentId: "", i })),
  ];
  const texts = owners.map(
    ({ i }) =>
      `note ${i} about ${topics[i % topics.length]} and ${topics[(i * 7) % topics.length]} number ${i}`,
  );
  const vectors = await embedder.embed(texts);
  for (const [n, owner] of owners.entries()) {
    const chain = testChain(
      { tenantId: owner.tenantId, userId: owner.userId, agentId: owner.agentId },
      {
        summary: texts[n],
        content: texts[n],
        metadata: { parity: owner.i % 2 ? "odd" : "even" },
        embedding: vectors[n],
      },
    );
    await sql.transaction(async (tx) => {
      await chainStore.save(tx, chain);
      for (const s of search) await s.upsert(tx, chain);
    });
  }
}

async function topResults(search: VectorSearch) {
  const [query] = await embedder.embed(["which hiking boots did I buy for the garden"]);
  return {
    all: await search.search({ tenantId: "t1", userId: "u1", embedding: query, limit: 5 }),
    agent: await search.search({
      tenantId: "t1",
      userId: "u1",
      agentId: "a1",
      embedding: query,
      limit: 5,
    }),
    filtered: await search.search({
      tenantId: "t1",
      userId: "u1",
      embedding: query,
      limit: 5,
      filter: { parity: "odd" },
    }),
  };
}

test("pgvector HNSW and the exact cosine scan give the same top results on the same data (PGlite)", async () => {
  const sql = await createPgliteSql();
  try {
    await migrateMemory(sql);
    const hnsw = await createVectorSearch({ sql, dimensions: 384 });
    const exact = await createVectorSearch({ sql, dimensions: 384, mode: "exact" });
    assert.equal(hnsw.kind, "hnsw");
    assert.equal(exact.kind, "exact");
    await seed(sql, [hnsw]);
    // At this size the planner prefers a sequential scan; make it take the HNSW index, and
    // check that it does, so the comparison really is index against exact scan.
    await sql.query("ANALYZE");
    await sql.query("SET enable_seqscan = off");
    const plan = await sql.query(
      `EXPLAIN SELECT chain_id FROM memory_chain_vectors
       WHERE tenant_id = 't1' AND user_id = 'u1' ORDER BY embedding <=> $1::vector LIMIT 5`,
      [`[${(await embedder.embed(["x"]))[0].join(",")}]`],
    );
    assert.match(JSON.stringify(plan.rows), /memory_chain_vectors_hnsw/);
    const a = await topResults(hnsw);
    await sql.query("RESET enable_seqscan");
    const b = await topResults(exact);
    for (const key of ["all", "agent", "filtered"] as const) {
      assert.equal(a[key].length, 5);
      assert.deepEqual(
        a[key].map((h) => h.chainId),
        b[key].map((h) => h.chainId),
        key,
      );
      for (const [i, hit] of a[key].entries())
        assert.ok(Math.abs(hit.similarity - b[key][i].similarity) < 1e-5);
    }
    assert.ok(a.all[0].similarity > a.all[4].similarity);
    assert.ok(a.all[0].similarity <= 1 && a.all[0].similarity > 0.2);
  } finally {
    await sql.close();
  }
});

test("HNSW after an embedder of another size: the old vectors are dropped, the new ones written and found (PGlite)", async () => {
  const sql = await createPgliteSql();
  try {
    await migrateMemory(sql);
    const scope = { tenantId: "t1", userId: "u1", agentId: "a1" };
    const before = await createVectorSearch({ sql, dimensions: 384, mode: "hnsw" });
    const old = testChain(scope, { embedding: (await embedder.embed(["hiking boots"]))[0] });
    await sql.transaction(async (tx) => {
      await chainStore.save(tx, old);
      await before.upsert(tx, old);
    });

    // As at a start with the new embedder, before the re-embedding has moved the chain.
    const after = await createVectorSearch({ sql, dimensions: 3, mode: "hnsw" });
    const query = { tenantId: "t1", userId: "u1", embedding: [1, 0, 0], limit: 5 };
    assert.deepEqual(await after.search(query), []);
    const moved = { ...old, embedding: [0.6, 0.8, 0], embeddingModel: "three-d" };
    await sql.transaction(async (tx) => {
      await chainStore.save(tx, moved);
      await after.upsert(tx, moved);
    });
    const [hit] = await after.search(query);
    assert.equal(hit.chainId, old.id);
    assert.ok(Math.abs(hit.similarity - 0.6) < 1e-6);
  } finally {
    await sql.close();
  }
});

test("PostgreSQL without pgvector: the exact path, scoped to tenant and user", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const pg = await createTestPostgres();
  try {
    await migrateMemory(pg.sql);
    const search = await createVectorSearch({ sql: pg.sql, dimensions: 384 });
    assert.equal(search.kind, (await pg.sql.hasVector()) ? "hnsw" : "exact");
    await seed(pg.sql, [search]);
    const { all, filtered } = await topResults(search);
    assert.equal(all.length, 5);
    const rows = await pg.sql.query<{
      tenant_id: string;
      user_id: string;
      metadata: { parity: string };
    }>("SELECT tenant_id, user_id, metadata FROM memory_chains WHERE id = ANY($1::uuid[])", [
      [...all, ...filtered].map((h) => h.chainId),
    ]);
    assert.ok(rows.rows.every((r) => r.tenant_id === "t1" && r.user_id === "u1"));
    assert.equal(rows.rows.filter((r) => r.metadata.parity === "odd").length >= 5, true);
  } finally {
    await pg.drop();
  }
});

test("the in-memory exact index follows inserts, updates, archiving and deletes", async () => {
  const sql = await createPgliteSql();
  try {
    await migrateMemory(sql);
    const exact = await createVectorSearch({ sql, dimensions: 384, mode: "exact" });
    await seed(sql, []);
    const { all: before } = await topResults(exact);
    const [best, second] = before.map((h) => h.chainId);
    const [query] = await embedder.embed(["which hiking boots did I buy for the garden"]);
    const search = (filter?: Record<string, string>) =>
      exact.search({ tenantId: "t1", userId: "u1", embedding: query, limit: 5, filter });

    await sql.query("UPDATE memory_chains SET status = 'archived' WHERE id = $1", [best]);
    assert.ok(!(await search()).some((h) => h.chainId === best), "archived chain left");
    await sql.query("DELETE FROM memory_chains WHERE id = $1", [second]);
    assert.ok(!(await search()).some((h) => h.chainId === second), "deleted chain left");
    await sql.query(`UPDATE memory_chains SET metadata = '{"parity":"changed"}' WHERE id = $1`, [
      before[2].chainId,
    ]);
    assert.deepEqual(
      (await search({ parity: "changed" })).map((h) => h.chainId),
      [before[2].chainId],
    );
    const { rows } = await sql.query<{ id: string }>(
      `INSERT INTO memory_chains (id, tenant_id, user_id, agent_id, session_id, status, embedding,
         last_access_at, first_event_at, last_event_at)
       VALUES ($1, 't1', 'u1', '', $2, 'closed', $3::real[], now(), now(), now()) RETURNING id`,
      [randomUUID(), randomUUID(), query],
    );
    const [top] = await search();
    assert.equal(top.chainId, rows[0].id);
    assert.ok(Math.abs(top.similarity - 1) < 1e-6);

    // After growth, swaps and removals, still exactly what brute force over the table gives.
    const all = await sql.query<{ id: string; embedding: number[] }>(
      "SELECT id, embedding FROM memory_chains WHERE tenant_id = 't1' AND user_id = 'u1' AND status <> 'archived'",
    );
    const norm = (v: number[]) => Math.sqrt(v.reduce((sum, x) => sum + x * x, 0));
    const expected = all.rows
      .map((r) => {
        const v = r.embedding.map(Number);
        const dot = v.reduce((sum, x, i) => sum + x * query[i], 0);
        return { chainId: r.id, similarity: dot / (norm(v) * norm(query)) };
      })
      .sort((a, b) => b.similarity - a.similarity || (a.chainId < b.chainId ? -1 : 1))
      .slice(0, 5);
    const got = await search();
    assert.deepEqual(
      got.map((h) => h.chainId),
      expected.map((h) => h.chainId),
    );
    for (const [i, hit] of got.entries()) {
      assert.ok(Math.abs(hit.similarity - expected[i].similarity) < 1e-5);
    }
  } finally {
    await sql.close();
  }
});

test("a user with more chains than one slice of the exact scan: brute force's top results (PostgreSQL)", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const pg = await createTestPostgres();
  const { sql } = pg;
  try {
    await migrateMemory(sql);
    const exact = await createVectorSearch({ sql, dimensions: 8, mode: "exact" });
    // 20,000 chains: the scan gives way once (16,384 rows a slice).
    await sql.query(
      `INSERT INTO memory_chains (id, tenant_id, user_id, agent_id, session_id, status, embedding,
         last_access_at, first_event_at, last_event_at)
       SELECT gen_random_uuid(), 't1', 'big', 'a' || (i % 2), gen_random_uuid(), 'closed',
         ARRAY[sin(i), cos(i), sin(2 * i), cos(3 * i), sin(5 * i), cos(7 * i), sin(11 * i), 0.5]::real[],
         now(), now(), now()
       FROM generate_series(1, 20000) AS i`,
    );
    const query = [0.3, -0.2, 0.9, 0.1, -0.4, 0.2, 0.05, 0.5];
    const search = (agentId?: string) =>
      exact.search({ tenantId: "t1", userId: "big", agentId, embedding: query, limit: 10 });

    const all = await sql.query<{ id: string; agent_id: string; embedding: number[] }>(
      "SELECT id, agent_id, embedding FROM memory_chains WHERE user_id = 'big'",
    );
    const norm = (v: number[]) => Math.sqrt(v.reduce((sum, x) => sum + x * x, 0));
    const bruteForce = (agentId?: string) =>
      all.rows
        .filter((r) => agentId === undefined || r.agent_id === agentId)
        .map((r) => {
          const v = r.embedding.map(Number);
          const dot = v.reduce((sum, x, i) => sum + x * query[i], 0);
          return { chainId: r.id, similarity: dot / (norm(v) * norm(query)) };
        })
        .sort((a, b) => b.similarity - a.similarity)
        .slice(0, 10);
    // The same chains with the same similarities (their order may differ at a tie in the last
    // float32 digit).
    for (const agentId of [undefined, "a1"]) {
      const got = await search(agentId);
      const expected = bruteForce(agentId);
      assert.deepEqual(got.map((h) => h.chainId).sort(), expected.map((h) => h.chainId).sort());
      for (const [i, hit] of got.entries()) {
        assert.ok(Math.abs(hit.similarity - expected[i].similarity) < 1e-5);
      }
    }
  } finally {
    await pg.drop();
  }
});
