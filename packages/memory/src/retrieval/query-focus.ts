import { type Embedder, embedOne } from "../embeddings/embedder.js";
import { escapeRegExp } from "../store/graph.js";
import type { QueryTerms } from "../store/lexical-search.js";

/**
 * A query word in at least this share of the user's turns says nothing about which turn is meant:
 * the speakers' names, in a transcript that names them in every line. BM25 already weighs such a
 * word near nothing; a vector does not, so it is left out of both sides of the cosine.
 */
const COMMON_SHARE = 0.1;

/** What the vector side compares: the query without its common words, and turns likewise. */
export interface QueryFocus {
  vector: number[];
  /** The query's lexemes in at least COMMON_SHARE of the user's turns (speakers' names among them). */
  common: string[];
  /** A turn's text without the query's common words, for its vector. */
  strip(text: string): string;
}

/** A word as queries and turns are matched: letters, digits, apostrophes. */
export const WORD = /[\p{L}\p{N}']+/gu;

/**
 * PostgreSQL's English stems are prefixes of the words they come from ("elis" of "Elise"), so a
 * word is one of the common lexemes when it starts with one and adds no more than an ending.
 */
export const isOneOf = (word: string, lexemes: string[]) => {
  const lower = word.toLowerCase();
  return lexemes.some((l) => lower.startsWith(l) && lower.length - l.length <= 3);
};

/**
 * Whether a text holds a word that is one of `lexeme`'s forms, as isOneOf says, asked of the text
 * whole: nothing is allocated per word, as the speaker check asks it of every candidate turn.
 */
export function holdsFormOf(lexeme: string): (text: string) => boolean {
  const form = new RegExp(
    `(?<![\\p{L}\\p{N}'])${escapeRegExp(lexeme)}[\\p{L}\\p{N}']{0,3}(?![\\p{L}\\p{N}'])`,
    "iu",
  );
  return (text) => form.test(text);
}

export async function focusQuery(
  embedder: Embedder,
  text: string,
  terms: QueryTerms,
  queryVector: number[],
): Promise<QueryFocus> {
  const common =
    terms.total > 0
      ? terms.terms.filter((t) => t.documents / terms.total >= COMMON_SHARE).map((t) => t.lexeme)
      : [];
  const rare = terms.terms.length - common.length;
  // A query of common words only keeps them: they are all it has.
  if (common.length === 0 || rare === 0) return { vector: queryVector, common, strip: (t) => t };
  const strip = (t: string) => t.replace(WORD, (w) => (isOneOf(w, common) ? "" : w));
  return { vector: await embedOne(embedder, strip(text)), common, strip };
}
