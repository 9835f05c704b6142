import type { Turn } from "../store/turns.js";
import { orderOfSaying } from "./quote-turns.js";

/**
 * Memory's own rendering of a quoted turn (quote-turns.ts): `[2026-11-26 17:34] User: …`, or
 * `[17:36] Agent: …` later the same day. A turn holding one repeats a search result, whoever
 * stored it.
 */
const RENDERED_QUOTE = /\[(?:\d{4}-\d{2}-\d{2} )?\d{2}:\d{2}\] (?:User|Agent):/;
/**
 * A reply holding an earlier turn this long (normalised) quotes it; a shorter one ("Thanks!",
 * "Sounds good") is said again in conversation without being a quote.
 */
const MIN_QUOTED_CHARS = 30;

const normalise = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();

/**
 * The turns among `turns` that quote memory back rather than say something: any turn holding
 * memory's rendering of a search result, and an agent reply holding, word for word, an earlier
 * turn of the same list (the original it quotes). Stored without `source: memory` (a client that
 * does not say where its reply came from), such a quote would otherwise rank beside its original,
 * or above it, as a second piece of evidence for the same fact.
 */
export function memoryEchoes(turns: Turn[]): Set<string> {
  const echoes = new Set<string>();
  const said: string[] = [];
  const seen = new Set<string>();
  for (const turn of orderOfSaying(turns)) {
    // A turn listed twice is one turn, not a quote of itself.
    if (seen.has(turn.eventId)) continue;
    seen.add(turn.eventId);
    const text = normalise(turn.content);
    if (
      RENDERED_QUOTE.test(turn.content) ||
      (turn.role === "agent" && said.some((earlier) => text.includes(earlier)))
    ) {
      echoes.add(turn.eventId);
      continue;
    }
    if (text.length >= MIN_QUOTED_CHARS) said.push(text);
  }
  return echoes;
}
