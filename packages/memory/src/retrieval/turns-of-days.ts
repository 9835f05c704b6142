import type { Sql } from "@atrium/kit";
import { turnsSaidBetween } from "../store/dated-turns.js";
import type { LexicalQuery, QueryTerms } from "../store/lexical-search.js";
import type { Turn } from "../store/turns.js";
import { addDays, type Day, dayOf, daysNamed, daysSpokenOf } from "./day-mentions.js";

/**
 * How far from a named day a turn may be said and still speak of it: "last Friday" looks back a
 * week, "tomorrow" or "on Friday" ahead.
 */
const DAYS_BEFORE = 7;
const DAYS_AFTER = 8;
/** Turns read per named day at most, nearest to the day first. */
const MAX_TURNS_PER_DAY = 400;
const MAX_DAYS = 3;
/**
 * Only a turn with one of these can speak of another day than its own (a date has a digit):
 * parsing a turn's times costs about a millisecond, so the others are not parsed.
 */
const TIME_WORDS =
  /\b(yesterday|tomorrow|ago|last|next|weekend|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b|\d/i;

/** The query's words a turn holds (PostgreSQL's English stems are prefixes of their words). */
function matchedIdf(content: string, terms: QueryTerms): number {
  const words = content.toLowerCase().match(/[\p{L}\p{N}']+/gu) ?? [];
  return terms.terms
    .filter((t) => words.some((w) => w.startsWith(t.lexeme)))
    .reduce((sum, t) => sum + t.idf, 0);
}

/**
 * The turns said on a day the question names, or speaking of it ("yesterday" the day after),
 * best first by the question's other words they hold; none when it names no day. A question
 * asked by date rarely shares its words with its answer's turn, but always its day.
 */
export async function turnsOfNamedDays(
  sql: Sql,
  query: LexicalQuery,
  terms: QueryTerms,
  now = new Date(),
): Promise<(Turn & { chainId?: string })[]> {
  const days = daysNamed(query.text, now).slice(0, MAX_DAYS);
  if (days.length === 0) return [];
  const named = new Set<Day>(days);
  const found = await Promise.all(
    days.map((day) =>
      turnsSaidBetween(
        sql,
        query,
        {
          from: addDays(day, -DAYS_BEFORE),
          to: addDays(day, DAYS_AFTER),
          near: addDays(day, 0.5),
        },
        MAX_TURNS_PER_DAY,
      ),
    ),
  );
  const seen = new Set<string>();
  return found
    .flat()
    .filter((t) => !seen.has(t.eventId) && seen.add(t.eventId))
    .filter(
      (t) =>
        named.has(dayOf(t.occurredAt)) ||
        (TIME_WORDS.test(t.content) &&
          daysSpokenOf(t.content, t.occurredAt).some((d) => named.has(d))),
    )
    .map((turn) => ({ turn, matched: matchedIdf(turn.content, terms) }))
    .sort((a, b) => b.matched - a.matched)
    .map(({ turn }) => turn);
}
