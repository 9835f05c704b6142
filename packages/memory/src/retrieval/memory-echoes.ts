import { escapeRegExp } from "../store/graph.js";
import type { Turn } from "../store/turns.js";
import { orderOfSaying } from "./quote-turns.js";
import type { SpeakerNames } from "./speaker-focus.js";

/**
 * Memory's own rendering of a quoted turn (quote-turns.ts): `[2026-11-26 17:34] User: …`,
 * `[17:36] Agent: …` later the same day, `[2026-11-26] User: …` for a date alone, and a
 * transcript's speakers by their names (`names`) instead of their roles. A turn holding one
 * repeats a search result, whoever stored it; a pasted log's `[10:30] Bob:` is not one unless
 * Bob speaks in this memory.
 */
function renderedQuote(names: SpeakerNames): RegExp {
  const speakers = ["User", "Agent", ...(names.user ?? []), ...(names.agent ?? [])];
  return new RegExp(
    `\\[(?:\\d{4}-\\d{2}-\\d{2}(?: \\d{2}:\\d{2})?|\\d{2}:\\d{2})\\] (?:${speakers.map(escapeRegExp).join("|")}):`,
    "u",
  );
}
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
export function memoryEchoes(turns: Turn[], names: SpeakerNames = {}): Set<string> {
  const rendered = renderedQuote(names);
  const echoes = new Set<string>();
  const said: string[] = [];
  const seen = new Set<string>();
  for (const turn of orderOfSaying(turns)) {
    // A turn listed twice is one turn, not a quote of itself.
    if (seen.has(turn.eventId)) continue;
    seen.add(turn.eventId);
    const text = normalise(turn.content);
    if (
      rendered.test(turn.content) ||
      (turn.role === "agent" && said.some((earlier) => text.includes(earlier)))
    ) {
      echoes.add(turn.eventId);
      continue;
    }
    if (text.length >= MIN_QUOTED_CHARS) said.push(text);
  }
  return echoes;
}
