import assert from "node:assert/strict";
import { test } from "node:test";
import { createPgliteSql } from "@atrium/kit";
import type { Scope } from "../domain.js";
import { createHashEmbedder } from "../embeddings/hash-embedder.js";
import { createWeightedHashEmbedder } from "../embeddings/weighted-hash-embedder.js";
import { chainStore } from "../store/chains.js";
import { createEventStore } from "../store/events.js";
import { migrateMemory } from "../store/migrate.js";
import { createSessionStore } from "../store/sessions.js";
import { createVectorSearch } from "../store/vector-search.js";
import { testChain } from "../testing/chain-record.js";
import { reembedChains } from "./reembed.js";

test("chains of another vector space are re-embedded once, user vectors recomputed, the index updated", async (t) => {
  const sql = await createPgliteSql();
  t.after(() => sql.close());
  await migrateMemory(sql);
  const old = createHashEmbedder();
  const now = createWeightedHashEmbedder();
  const scope: Scope = { tenantId: "t", userId: "u", agentId: "a" };
  const session = await createSessionStore(sql).create(scope, {});
  const events = createEventStore(sql);
  const texts = ["Which hiking boots should I buy?", "Waterproof ones with ankle support."];
  const stored = await events.insertAll(
    texts.map((content, i) => ({
      sessionId: session.id,
      scope,
      role: i ? ("agent" as const) : ("user" as const),
      type: "message" as const,
      content,
      metadata: {},
      timestamp: new Date(),
    })),
  );
  const content = texts.map((x, i) => `${i ? "Agent" : "User"}: ${x}`).join("\n");
  const chain = testChain(scope, {
    sessionId: session.id,
    eventIds: stored.map((s) => s.event.id),
    content,
    embedding: (await old.embed([content]))[0],
    embeddingModel: old.model,
  });
  const vectorSearch = await createVectorSearch({ sql, dimensions: 384 });
  await sql.transaction(async (tx) => {
    await chainStore.save(tx, chain);
    await vectorSearch.upsert(tx, chain);
  });
  const changed: Scope[][] = [];
  const first = reembedChains({
    sql,
    embedder: now,
    vectorSearch,
    onChainsChanged: async (scopes) => {
      changed.push(scopes);
    },
  });
  assert.equal(await first.done, 1);
  const [saved] = await chainStore.byIds(sql, [chain.id], true);
  assert.equal(saved.embeddingModel, "hash-idf-384");
  const [expected] = await now.embed([content]);
  assert.ok(saved.embedding.every((x, i) => Math.abs(x - expected[i]) < 1e-6));
  const [userVector] = await now.embed([texts[0]]);
  assert.ok(saved.userVectorSum?.every((x, i) => Math.abs(x - userVector[i]) < 1e-6));
  const [hit] = await vectorSearch.search({ ...scope, embedding: expected, limit: 1 });
  assert.ok(hit.similarity > 0.999, "the index holds the new vector");
  assert.deepEqual(changed, [[scope]]);
  assert.equal(await reembedChains({ sql, embedder: now, vectorSearch }).done, 0);
});
