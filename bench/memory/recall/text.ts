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

/**
 * The strings that count as a question's answer. A day answered by a turn's timestamp is written
 * as an ISO date; a result may print that day in any common form ("Tue, 23 Dec 2025 14:15").
 */
export function answerForms(answer: string): string[] {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(answer)) return [answer];
  const date = new Date(`${answer}T00:00:00Z`);
  const year = date.getUTCFullYear();
  const month = (style: "long" | "short") =>
    date.toLocaleDateString("en-US", { month: style, timeZone: "UTC" });
  const days = [String(date.getUTCDate()), String(date.getUTCDate()).padStart(2, "0")];
  return [
    answer,
    answer.replaceAll("-", "/"),
    ...days.flatMap((day) =>
      (["long", "short"] as const).flatMap((style) => [
        `${day} ${month(style)} ${year}`,
        `${month(style)} ${day}, ${year}`,
      ]),
    ),
  ];
}
