import type { Sql } from "@atrium/kit";
import { EMBED_CHARS } from "../chains/analysis-budget.js";
import type { Scope } from "../domain.js";
import type { Embedder } from "../embeddings/embedder.js";
import { chainStore } from "../store/chains.js";
import { turnStore } from "../store/turns.js";
import type { VectorSearch } from "../store/vector-search.js";

export interface ReembedOptions {
  sql: Sql;
  embedder: Embedder;
  vectorSearch: VectorSearch;
  onChainsChanged?: (scopes: Scope[]) => Promise<void>;
  /** Chains per pass; default 100. */
  batchSize?: number;
}

export interface Reembedding {
  /** Resolves with the number of chains re-embedded once none is left in another space. */
  readonly done: Promise<number>;
  /** Stops after the current pass. */
  stop(): Promise<void>;
}

/**
 * Moves every chain into the running embedder's vector space: a chain's vector (and, for the
 * continuity check, the sum of its user messages' vectors) is recomputed from its text and
 * messages. Idempotent and safe with several instances: a chain another instance or the chain
 * check wrote meanwhile already carries this model and is left alone.
 */
export function reembedChains(options: ReembedOptions): Reembedding {
  const { sql, embedder, vectorSearch } = options;
  const batchSize = options.batchSize ?? 100;
  let stopped = false;

  async function pass(): Promise<number> {
    const { rows } = await sql.query<{ id: string }>(
      "SELECT id FROM memory_chains WHERE embedding_model <> $1 ORDER BY id LIMIT $2",
      [embedder.model, batchSize],
    );
    if (rows.length === 0) return 0;
    const chains = await chainStore.byIds(
      sql,
      rows.map((r) => r.id),
      true,
    );
    for (const chain of chains) {
      const turns = await turnStore.ofChains(sql, chain.scope, [chain.id]);
      const users = (turns.get(chain.id) ?? []).filter((t) => t.role === "user");
      const [embedding, ...userVectors] = await embedder.embed([
        chain.content.slice(-EMBED_CHARS),
        ...users.map((t) => t.content),
      ]);
      chain.embedding = embedding;
      chain.userVectorSum =
        userVectors.length === 0
          ? null
          : userVectors.reduce((sum, v) => sum.map((x, i) => x + v[i]));
      chain.embeddingModel = embedder.model;
    }
    await sql.transaction(async (tx) => {
      for (const chain of chains) {
        const { rowCount } = await tx.query(
          `UPDATE memory_chains SET embedding = $2::real[], user_vector_sum = $3::real[],
             embedding_model = $4
           WHERE id = $1 AND embedding_model <> $4`,
          [chain.id, chain.embedding, chain.userVectorSum, chain.embeddingModel],
        );
        if (rowCount > 0 && chain.status !== "archived") await vectorSearch.upsert(tx, chain);
      }
    });
    await options.onChainsChanged?.(chains.map((c) => c.scope));
    return chains.length;
  }

  const done = (async () => {
    let total = 0;
    while (!stopped) {
      const count = await pass();
      if (count === 0) break;
      total += count;
    }
    return total;
  })();

  return {
    done,
    async stop() {
      stopped = true;
      await done.catch(() => undefined);
    },
  };
}
