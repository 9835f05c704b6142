// Sentence matching shared by the generator (which checks that evidence is unambiguous) and the
// benchmark (which decides whether a result quoted an evidence turn).

/** Lowercase with runs of whitespace collapsed. */
export const normalize = (text: string) => text.toLowerCase().replace(/\s+/g, " ").trim();

/**
 * The sentences of a turn long enough to identify it (4 words or more): a result that quotes one
 * of them verbatim has retrieved the turn, however the result trims or prefixes it.
 */
export function identifyingSentences(text: string): string[] {
  return normalize(text)
    .split(/(?<=[.!?])\s+/)
    .filter((sentence) => sentence.split(" ").length >= 4);
}

/** Whether any identifying sentence of the turn occurs in the (normalized) result text. */
export const quotes = (normalizedResults: string, turnText: string) =>
  identifyingSentences(turnText).some((sentence) => normalizedResults.includes(sentence));
