import type { Embedder } from "./embedder.js";
import { l2Normalize } from "./vectors.js";

export interface HashEmbedderOptions {
  /** Default 384, the size of the usual small sentence-embedding models. */
  dimensions?: number;
}

// Function words carry little topic signal; they still count, only less, so that texts made
// only of them do not collapse to the zero vector.
export const STOPWORDS = new Set(
  "a an and are as at be but by do does for from had has have he her his i if in is it its me my no not of on or our she so that the their them they this to was we were what when where which who will with you your".split(
    " ",
  ),
);

const UNIGRAM_WEIGHT = 1;
const STOPWORD_WEIGHT = 0.15;
const BIGRAM_WEIGHT = 0.6;
const CHAR_NGRAM_WEIGHT = 0.35;

/** FNV-1a, 32 bit: fast, stable across runs and platforms, good enough spread for hashing tricks. */
export function fnv1a(text: string, seed = 0x811c9dc5): number {
  let h = seed;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

export function tokenize(text: string): string[] {
  return (
    text
      .normalize("NFKD")
      .replace(/\p{M}/gu, "")
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? []
  );
}

/** Adds a feature to `vector` at its hashed index, with a hashed sign. */
export function addHashedFeature(vector: Float64Array, feature: string, weight: number): void {
  const h = fnv1a(feature);
  const sign = fnv1a(feature, 0x9747b28c) & 1 ? 1 : -1;
  vector[h % vector.length] += sign * weight;
}

/**
 * The first hashing embedder (`hash-384`, `EMBEDDINGS_PROVIDER=hash-v1`): every word weighs the
 * same, so frequent words and names dominate; kept for stores built with it and as the
 * benchmark's reference. `EMBEDDINGS_PROVIDER=hash` is weighted-hash-embedder.ts.
 *
 * Signed feature hashing of word unigrams, bigrams and character 3–5-grams, L2-normalised.
 * Deterministic and weight-free: good at lexical overlap (including inflections, through the
 * character n-grams), blind to synonyms. The sign hash makes collisions cancel on average
 * instead of piling up.
 */
export function createHashEmbedder(options: HashEmbedderOptions = {}): Embedder {
  const dimensions = options.dimensions ?? 384;

  const add = addHashedFeature;

  function embedText(text: string): number[] {
    const vector = new Float64Array(dimensions);
    const words = tokenize(text);
    for (let i = 0; i < words.length; i++) {
      const word = words[i];
      const stop = STOPWORDS.has(word);
      add(vector, `w:${word}`, stop ? STOPWORD_WEIGHT : UNIGRAM_WEIGHT);
      if (i + 1 < words.length) add(vector, `b:${word} ${words[i + 1]}`, BIGRAM_WEIGHT);
      if (stop) continue;
      const padded = `<${word}>`;
      const grams: string[] = [];
      for (let n = 3; n <= 5; n++) {
        for (let j = 0; j + n <= padded.length; j++) grams.push(padded.slice(j, j + n));
      }
      // Long words would otherwise outweigh short ones through sheer n-gram count.
      const weight = CHAR_NGRAM_WEIGHT / Math.sqrt(grams.length || 1);
      for (const gram of grams) add(vector, `c:${gram}`, weight);
    }
    return l2Normalize(vector);
  }

  return {
    model: `hash-${dimensions}`,
    dimensions,
    semantic: false,
    embed: async (texts) => texts.map(embedText),
  };
}
