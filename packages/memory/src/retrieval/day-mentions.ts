import * as chrono from "chrono-node";

/** `2024-01-05`: a calendar day in UTC, as turns' times are compared. */
export type Day = string;

const DAY_MS = 86_400_000;
export const dayOf = (at: Date): Day => at.toISOString().slice(0, 10);
export const addDays = (day: Day, days: number): Date =>
  new Date(Date.parse(`${day}T00:00:00Z`) + days * DAY_MS);

/**
 * Dotted numeric dates (`09.01.2024`) are day first wherever they are written; slashed ones keep
 * chrono's month-first reading.
 */
const parserFor = (text: string) =>
  /\b\d{1,2}\.\d{1,2}\.\d{2,4}\b/.test(text) ? chrono.en.GB : chrono.en;

/** A bound, not a day: "before January 4th" asks about what came before it. */
const BOUND = /\b(before|after|since|until|till|by)\s*$/i;

/**
 * The days a question names outright ("on 5 January 2024", "on 21.01.2024"), not ranges or
 * bounds: the turns said on such a day, or that speak of it, are where its answer is.
 */
export function daysNamed(question: string, now: Date): Day[] {
  // A named day has a digit; the parse (about a millisecond) is kept off every other search.
  if (!/\d/.test(question)) return [];
  const days = parserFor(question)
    .parse(question, { instant: now, timezone: 0 })
    .filter((r) => r.start.isCertain("day") && r.start.isCertain("month"))
    .filter((r) => !BOUND.test(question.slice(0, r.index)))
    .map((r) => dayOf(r.start.date()));
  return [...new Set(days)];
}

/**
 * The days a turn speaks of, its relative times ("yesterday", "last Friday", "on the 5th")
 * resolved against when it was said, and the day it was said on.
 */
export function daysSpokenOf(content: string, said: Date): Day[] {
  const days = parserFor(content)
    .parse(content, { instant: said, timezone: 0 })
    .map((r) => dayOf(r.start.date()));
  return [...new Set([dayOf(said), ...days])];
}
