import type { ScopeFilter } from "./scope-filter.js";

export interface VectorQuery extends ScopeFilter {
  tenantId: string;
  userId: string;
  embedding: number[];
  limit: number;
}

export interface VectorHit {
  chainId: string;
  /** Cosine similarity, higher is closer. */
  similarity: number;
}
