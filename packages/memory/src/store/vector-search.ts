import type { Sql, SqlExecutor } from "@atrium/kit";
import { createExactVectorIndex } from "./exact-vector-index.js";
import { scopeFilterClause } from "./scope-filter.js";
import type { VectorHit, VectorQuery } from "./vector-query.js";

/**
 * Nearest chains by cosine. `hnsw` keeps a pgvector copy of each chain's vector under an HNSW
 * index; `exact` scans the user's chains in memory, kept current from the database
 * (exact-vector-index.ts). Both answer with the same
 * chains in the same order (the HNSW index is approximate only for very large per-user sets).
 */
export interface VectorSearch {
  readonly kind: "hnsw" | "exact";
  /** Records a chain's vector; the exact path reads it from the chain row, so it does nothing. */
  upsert(tx: SqlExecutor, chain: IndexedChain): Promise<void>;
  /** Takes archived chains out of the index. */
  remove(tx: SqlExecutor, chainIds: string[]): Promise<void>;
  /**
   * Refreshes planner statistics of the vector table. PGlite has no autovacuum: without this
   * the planner may never learn the table grew and keep sorting it instead of using the index.
   */
  refreshStatistics(): Promise<void>;
  search(query: VectorQuery): Promise<VectorHit[]>;
}

export interface IndexedChain {
  id: string;
  scope: { tenantId: string; userId: string; agentId: string };
  metadata: Record<string, string>;
  embedding: number[];
}

export interface VectorSearchOptions {
  sql: Sql;
  dimensions: number;
  /** `auto` (default): HNSW when pgvector is available, else exact. */
  mode?: "auto" | "hnsw" | "exact";
  onFallback?: (reason: string) => void;
}

const vectorLiteral = (v: number[]) => `[${v.join(",")}]`;

function createExactSearch(sql: Sql): VectorSearch {
  const index = createExactVectorIndex({ sql });
  return {
    kind: "exact",
    async upsert() {},
    async remove() {},
    async refreshStatistics() {},
    search: (query) => index.search(query),
  };
}

async function createHnswSearch(sql: Sql, dimensions: number): Promise<VectorSearch> {
  await sql.query("CREATE EXTENSION IF NOT EXISTS vector");
  // The column holds one vector size. A table of another size is from an earlier embedder: it
  // only mirrors memory_chains, so it is dropped and filled again below and by the re-embedding
  // that follows an embedder change (otherwise every write and search fails on the sizes).
  const { rows } = await sql.query<{ dimensions: number }>(
    `SELECT atttypmod AS dimensions FROM pg_attribute
     WHERE attrelid = to_regclass('memory_chain_vectors') AND attname = 'embedding'`,
  );
  if (rows.length > 0 && rows[0].dimensions !== dimensions) {
    await sql.query("DROP TABLE memory_chain_vectors");
  }
  await sql.query(
    `CREATE TABLE IF NOT EXISTS memory_chain_vectors (
       chain_id uuid PRIMARY KEY REFERENCES memory_chains (id) ON DELETE CASCADE,
       tenant_id text NOT NULL,
       user_id text NOT NULL,
       agent_id text NOT NULL,
       metadata jsonb NOT NULL,
       embedding vector(${dimensions}) NOT NULL
     )`,
  );
  await sql.query(
    `CREATE INDEX IF NOT EXISTS memory_chain_vectors_hnsw ON memory_chain_vectors
       USING hnsw (embedding vector_cosine_ops)`,
  );
  // Chains written while the service ran on the exact path (or before pgvector was installed).
  await sql.query(
    `INSERT INTO memory_chain_vectors (chain_id, tenant_id, user_id, agent_id, metadata, embedding)
     SELECT c.id, c.tenant_id, c.user_id, c.agent_id, c.metadata, c.embedding::vector(${dimensions})
     FROM memory_chains c
     WHERE cardinality(c.embedding) = ${dimensions} AND c.status <> 'archived'
       AND NOT EXISTS (SELECT 1 FROM memory_chain_vectors v WHERE v.chain_id = c.id)`,
  );
  const refreshStatistics = async () => {
    await sql.query("ANALYZE memory_chain_vectors");
  };
  await refreshStatistics();
  return {
    kind: "hnsw",
    refreshStatistics,
    async upsert(tx, chain) {
      await tx.query(
        `INSERT INTO memory_chain_vectors (chain_id, tenant_id, user_id, agent_id, metadata, embedding)
         VALUES ($1, $2, $3, $4, $5::jsonb, $6::vector)
         ON CONFLICT (chain_id) DO UPDATE SET metadata = EXCLUDED.metadata, embedding = EXCLUDED.embedding`,
        [
          chain.id,
          chain.scope.tenantId,
          chain.scope.userId,
          chain.scope.agentId,
          JSON.stringify(chain.metadata),
          vectorLiteral(chain.embedding),
        ],
      );
    },
    async remove(tx, chainIds) {
      if (chainIds.length === 0) return;
      await tx.query("DELETE FROM memory_chain_vectors WHERE chain_id = ANY($1::uuid[])", [
        chainIds,
      ]);
    },
    async search(query) {
      const params: unknown[] = [vectorLiteral(query.embedding), query.tenantId, query.userId];
      const extra = scopeFilterClause(query, params, "v");
      params.push(query.limit);
      const efSearch = Math.min(1000, Math.max(40, query.limit * 4));
      const rows = await sql.transaction(async (tx) => {
        // Iterative scans keep walking the graph until enough rows pass the user/metadata
        // filter, instead of returning fewer than `limit` hits.
        await tx.query("SET LOCAL hnsw.iterative_scan = relaxed_order");
        await tx.query(`SET LOCAL hnsw.ef_search = ${efSearch}`);
        const result = await tx.query<{ id: string; similarity: number }>(
          // One table, so the filters run inside the index scan (archived chains are removed).
          `SELECT v.chain_id AS id, 1 - (v.embedding <=> $1::vector) AS similarity
           FROM memory_chain_vectors v
           WHERE v.tenant_id = $2 AND v.user_id = $3${extra}
           ORDER BY v.embedding <=> $1::vector
           LIMIT $${params.length}`,
          params,
        );
        return result.rows;
      });
      // relaxed_order may return neighbours slightly out of order.
      return rows
        .map((r) => ({ chainId: r.id, similarity: Number(r.similarity) }))
        .sort((a, b) => b.similarity - a.similarity || (a.chainId < b.chainId ? -1 : 1));
    },
  };
}

export async function createVectorSearch(options: VectorSearchOptions): Promise<VectorSearch> {
  const mode = options.mode ?? "auto";
  if (mode === "exact") return createExactSearch(options.sql);
  if (mode === "hnsw") return createHnswSearch(options.sql, options.dimensions);
  if (!(await options.sql.hasVector())) return createExactSearch(options.sql);
  try {
    return await createHnswSearch(options.sql, options.dimensions);
  } catch (error) {
    // pgvector installed on the server but the role may not create extensions: still serve.
    options.onFallback?.(
      `pgvector unusable, exact cosine scan instead: ${(error as Error).message}`,
    );
    return createExactSearch(options.sql);
  }
}
