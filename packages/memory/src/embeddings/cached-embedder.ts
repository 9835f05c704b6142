import { createHash } from "node:crypto";
import type { Embedder } from "./embedder.js";

/** The part of the kit's Cache port the embedding cache needs. */
export interface EmbeddingCacheStore {
  get(key: string): Promise<string | null>;
  set(key: string, value: string, ttlSeconds?: number): Promise<void>;
}

export interface CachedEmbedderOptions {
  store: EmbeddingCacheStore;
  /** Default 7 days: embeddings never go stale, the TTL only bounds memory. */
  ttlSeconds?: number;
}

export function embeddingCacheKey(model: string, text: string): string {
  return `emb:${createHash("sha256").update(model).update("\0").update(text).digest("base64url")}`;
}

/**
 * Wraps an embedder with a cache keyed by a hash of model and text, so a repeated text (the same
 * query, a re-summarised chain) costs no upstream call. A broken cache only costs speed.
 */
export function createCachedEmbedder(inner: Embedder, options: CachedEmbedderOptions): Embedder {
  const ttl = options.ttlSeconds ?? 7 * 24 * 3600;
  return {
    model: inner.model,
    dimensions: inner.dimensions,
    semantic: inner.semantic,
    ...(inner.wordCloseness ? { wordCloseness: inner.wordCloseness.bind(inner) } : {}),
    async embed(texts) {
      const keys = texts.map((t) => embeddingCacheKey(inner.model, t));
      const cached = await Promise.all(keys.map((k) => options.store.get(k).catch(() => null)));
      const out: (number[] | undefined)[] = cached.map((c) =>
        c ? (JSON.parse(c) as number[]) : undefined,
      );
      const missing = out.flatMap((v, i) => (v ? [] : [i]));
      if (missing.length > 0) {
        const fresh = await inner.embed(missing.map((i) => texts[i]));
        await Promise.all(
          missing.map((i, j) => {
            out[i] = fresh[j];
            return options.store.set(keys[i], JSON.stringify(fresh[j]), ttl).catch(() => undefined);
          }),
        );
      }
      return out as number[][];
    },
  };
}
