import type { Turn } from "../store/turns.js";
import { WORD } from "./query-focus.js";
import { namePrefix, type SpeakerNames } from "./speaker-focus.js";

/**
 * A turn quoted whole when it is this short; longer ones are cut to what matched, this long at
 * most (on REALTALK 240 and 320, then 200 and 260, gave the same evidence@10 as these for 86,
 * then about 70, more characters a question).
 */
const WHOLE_TURN_CHARS = 160;
const MAX_QUOTE_CHARS = 200;
/**
 * A sentence is quoted for what it matched when it holds this share of the best one's weight (on
 * REALTALK, every matching sentence: the answer shown for 0.7 % more questions, for 23 characters
 * a question more; half: 1 % fewer for 12 less).
 */
const HIT_SHARE = 0.25;
/**
 * A user turn quoted only as what an agent reply answers: its end, where the question or the
 * statement replied to usually is, this long at most. A short reply ("Biscuit sounds lovely.")
 * means little without it; a long one says most of what it is about, and the last words of the
 * turn it answers (`asked`) are enough to say what was asked: on REALTALK, 160 characters for
 * every answered turn and 60 for those of replies of 100 characters or more found the same
 * evidence, the second for 47 characters a question less (the answer's words shown for two
 * questions fewer of 414; leaving those turns out lost two questions' evidence).
 */
const ANSWERED_QUOTE_CHARS = 160;
const ASKED_QUOTE_CHARS = 60;
/** An agent reply this long says most of what it is about. */
const SELF_CONTAINED_REPLY_CHARS = 100;

/** How the user turn an agent reply answers is quoted: `asked` after a long reply, else `answered`. */
export function quotedAsAnswered(reply: Turn): "answered" | "asked" {
  return reply.content.trim().length < SELF_CONTAINED_REPLY_CHARS ? "answered" : "asked";
}

const SPEAKERS = { user: "User", agent: "Agent" } as const;

/** `2026-02-03 14:05`, in UTC: what a person and a model read at a glance, and sortable. */
export function quoteTime(at: Date): string {
  return at.toISOString().slice(0, 16).replace("T", " ");
}

function sentences(text: string): string[] {
  return (
    text
      .match(/[^.!?\n]+(?:[.!?]+|\n|$)/g)
      ?.map((s) => s.trim())
      .filter(Boolean) ?? [text]
  );
}

/**
 * The start of `text`, `max` characters at most, ending at a word's end when a space allows (a
 * reader, person or model, stumbles over half a word); a single longer word is cut.
 */
function head(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max + 1);
  const space = cut.lastIndexOf(" ");
  return (space > 0 ? cut.slice(0, space) : cut.slice(0, max)).trimEnd();
}

/** The end of `text`, `max` characters at most, starting at a word's start when a space allows. */
function tail(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(text.length - max - 1);
  const space = cut.indexOf(" ");
  return (space >= 0 && space < cut.length - 1 ? cut.slice(space + 1) : cut.slice(1)).trimStart();
}

/**
 * The share of such a stretch left before the question word it is built around, for what leads
 * to it (on REALTALK's merged turns, 0.05 and 0.4 showed the answer for one question fewer and
 * one more of 430, for 10 characters a question less and more).
 */
const LEAD_SHARE = 0.2;

/**
 * The stretch of one overlong sentence, `max` characters at most and cut between words, that
 * holds the most of the question (each term once, by weight): the words around a match rather
 * than the sentence's start, which on REALTALK's unpunctuated messages often ended before the
 * answer ("How long did Nicolas have to leave work when he had a nosebleed?": "…I had a nosebleed
 * as soon as I entered and had to leave for 2 hours", where the start ended at "nosebleed as").
 * Its start when no word matches.
 */
function around(
  sentence: string,
  terms: readonly QuoteTerm[],
  max: number,
): { text: string; start: number; end: number } {
  const matched: { at: number; term: number }[] = [];
  for (const m of sentence.matchAll(WORD)) {
    const word = m[0].toLowerCase();
    const term = terms.findIndex((t) => word.startsWith(t.lexeme));
    if (term >= 0) matched.push({ at: m.index, term });
  }
  // One pass, two pointers (a megabyte message can match its words many thousand times): the
  // stretch built around each match in turn, the weight of the distinct terms it holds kept as
  // matches enter and leave it.
  const lead = Math.round(max * LEAD_SHARE);
  const held = new Array<number>(terms.length).fill(0);
  let weight = 0;
  let first = 0;
  let next = 0;
  let start = 0;
  let most = 0;
  for (const anchor of matched) {
    const from = Math.max(0, anchor.at - lead);
    for (; next < matched.length && matched[next].at < from + max; next++) {
      if (held[matched[next].term]++ === 0) weight += terms[matched[next].term].weight;
    }
    for (; matched[first].at < from; first++) {
      if (--held[matched[first].term] === 0) weight -= terms[matched[first].term].weight;
    }
    if (weight > most) {
      most = weight;
      start = from;
    }
  }
  if (start > 0) {
    // To the next word's start, which is at the match at the latest.
    const wordStart = /(?<![\p{L}\p{N}'])[\p{L}\p{N}']/gu;
    wordStart.lastIndex = start;
    start = wordStart.exec(sentence)?.index ?? start;
  }
  const text = head(sentence.slice(start), max);
  return { text, start, end: start + text.length };
}

/** A word of the question as matched: its PostgreSQL English stem and its rarity (BM25's idf). */
export interface QuoteTerm {
  lexeme: string;
  weight: number;
}

/**
 * How much of the question a sentence holds: the weights of the terms it mentions, each once.
 * PostgreSQL's English stems are prefixes of the words they come from ("agenc" of "agencies",
 * "research" of "researching"), so a word starting with the stem is a match.
 */
function weightIn(sentence: string, terms: readonly QuoteTerm[]): number {
  const words = sentence.toLowerCase().match(WORD) ?? [];
  let weight = 0;
  for (const { lexeme, weight: w } of terms) {
    if (words.some((word) => word.startsWith(lexeme))) weight += w;
  }
  return weight;
}

/** The kept sentences in text order, `…` where sentences are left out. */
function joinKept(parts: string[], keep: Set<number>): string {
  let quote = "";
  let previous = -1;
  for (const i of [...keep].sort((a, b) => a - b)) {
    const gap = previous >= 0 && i > previous + 1 ? " … " : quote ? " " : i > 0 ? "… " : "";
    quote = `${quote}${gap}${parts[i]}`;
    previous = i;
  }
  return previous < parts.length - 1 ? `${quote} …` : quote;
}

/**
 * What of a turn to quote: all of a short turn; of a long one, the sentences that hold the most
 * of the question (its rarest words weigh most, so a speaker's name in every turn decides
 * nothing), as many as fit in MAX_QUOTE_CHARS, then the sentence after the best one if it fits,
 * where an answer goes on; the opening sentences when nothing matched by word (a turn found by
 * its vector). The matched sentences used to be taken in text order with one sentence of context
 * each side, and the first match's context could fill the bound before the sentence that
 * answered: on REALTALK, of the 414 questions whose evidence says words of the answer, a listed
 * evidence turn's quote showed them for 61.4 %, now 63.5 %, with 17 characters a question less.
 */
export function excerpt(content: string, terms: readonly QuoteTerm[]): string {
  const text = content.trim();
  if (text.length <= WHOLE_TURN_CHARS) return text;
  const parts = sentences(text);
  const weights = parts.map((part) => weightIn(part, terms));
  // A loop, not Math.max(...weights): a megabyte message has more sentences than a call has
  // room for arguments.
  let most = 0;
  for (const weight of weights) if (weight > most) most = weight;
  const hits = parts
    .map((_, i) => i)
    .filter((i) => weights[i] > 0 && weights[i] >= most * HIT_SHARE)
    .sort((a, b) => weights[b] - weights[a] || a - b);
  const keep = new Set<number>();
  const tryKeep = (i: number) => {
    if (i < 0 || i >= parts.length || keep.has(i)) return;
    keep.add(i);
    if (joinKept(parts, keep).length > MAX_QUOTE_CHARS) keep.delete(i);
  };
  const best = hits[0] ?? 0;
  for (const i of hits.length > 0 ? hits : [0]) tryKeep(i);
  if (!keep.has(best)) {
    // The best sentence alone is longer than the bound (people often type without full stops).
    const quote = around(parts[best], terms, MAX_QUOTE_CHARS - 4);
    const before = best > 0 || quote.start > 0 ? "… " : "";
    const after = best < parts.length - 1 || quote.end < parts[best].length ? " …" : "";
    return `${before}${quote.text}${after}`;
  }
  tryKeep(best + 1);
  return joinKept(parts, keep);
}

/** A stored interaction gives both turns one time: the user's comes first. */
const order = (t: Turn) => t.occurredAt.getTime() * 2 + (t.role === "user" ? 0 : 1);

/** Turns oldest first, as they were said. */
export const orderOfSaying = <T extends Turn>(turns: T[]): T[] =>
  [...turns].sort((a, b) => order(a) - order(b));

/** The end of a turn, whole sentences while they fit in ANSWERED_QUOTE_CHARS. */
export function ending(content: string, max = ANSWERED_QUOTE_CHARS): string {
  const text = content.trim();
  if (text.length <= max) return text;
  const parts = sentences(text);
  let quote = "";
  for (let i = parts.length - 1; i >= 0; i--) {
    const next = quote ? `${parts[i]} ${quote}` : parts[i];
    if (next.length + 2 > max) break;
    quote = next;
  }
  return quote ? `… ${quote}` : `…${tail(text, max - 1)}`;
}

/**
 * A reply quoted only as what answers a matched question: its start, where a reply's answer
 * usually is ("Yes, in May."), this long at most (on REALTALK 100 and 60 showed the answer for
 * the same questions; 60 cost 27 characters a question less).
 */
const REPLY_QUOTE_CHARS = 60;

/** The start of a turn, whole sentences while they fit in REPLY_QUOTE_CHARS. */
export function opening(content: string, max = REPLY_QUOTE_CHARS): string {
  const text = content.trim();
  if (text.length <= max) return text;
  let quote = "";
  for (const part of sentences(text)) {
    const next = quote ? `${quote} ${part}` : part;
    if (next.length + 2 > max) break;
    quote = next;
  }
  return quote ? `${quote} …` : `${head(text, max - 1)}…`;
}

/**
 * A message of the same speaker just before or after a matched one, quoted by its end or its
 * start, this long at most: what joins it to the matched message is at that edge.
 */
const NEIGHBOUR_QUOTE_CHARS = 60;

/**
 * How a turn is quoted: as matched, as what a short reply answers (`answered`) or a long one
 * (`asked`), as the reply to a question, or as the same speaker's message just before or after
 * a matched one.
 */
export type QuotedAs = "matched" | "answered" | "asked" | "reply" | "before" | "after";

const DAY_MS = 86_400_000;

/**
 * How a quoted line is stamped, given the line before it: in full (`[2026-02-03 14:05]`) when it
 * opens the page or starts a new day, by its minute alone (`[14:07]`) later the same day, not at
 * all when said the same minute (an exchange, or a whole session stored with one time). The
 * stamps were a fifth of what a search returned on REALTALK; none of this loses a time. A time of
 * exactly midnight UTC is a date alone (`[2026-02-03]`): what a client sends that knows only the
 * day a conversation happened, as an import of dated sessions does.
 */
function stamp(at: Date, before: Date | undefined): string {
  const time = quoteTime(at);
  const previous = before && quoteTime(before);
  if (previous === time) return "";
  if (previous?.slice(0, 10) === time.slice(0, 10)) return `[${time.slice(11)}] `;
  return at.getTime() % DAY_MS === 0 ? `[${time.slice(0, 10)}] ` : `[${time}] `;
}

/**
 * Who said a turn, as its line names them, and the text to quote: the name the turn opens with
 * when it is one of its side's names in `names` (a transcript's `Nicolas: …` is quoted as `Nicolas: …`,
 * not `User: Nicolas: …`: on REALTALK the role labels were 79 characters of a question's 1,624
 * and said less than the names beside them), else its role.
 */
function speakerOf(turn: Turn, names: SpeakerNames): { speaker: string; content: string } {
  const name = namePrefix(turn.content);
  if (name !== undefined && names[turn.role]?.has(name))
    return { speaker: name, content: turn.content.trimStart().slice(name.length + 2) };
  return { speaker: SPEAKERS[turn.role], content: turn.content };
}

/**
 * A dialogue page's quoted turns, oldest first: `[time] Speaker: text`, one per line, each stamped
 * as `stamp` says; the speaker by name when `names` has it, else by role. A turn quoted as `answered` or `asked` (what a reply answers, not itself
 * matched) is quoted by its ending, one quoted as the `reply` to a matched question by its
 * opening, where an answer starts; the same speaker's message just `before` a matched one by its
 * end, the one just `after` by its start.
 */
export function quoteTurns(
  turns: { turn: Turn; terms: readonly QuoteTerm[]; as?: QuotedAs }[],
  names: SpeakerNames = {},
): string {
  const text = (content: string, terms: readonly QuoteTerm[], as: QuotedAs = "matched") => {
    switch (as) {
      case "answered":
        return ending(content);
      case "asked":
        return ending(content, ASKED_QUOTE_CHARS);
      case "reply":
        return opening(content);
      case "before":
        return ending(content, NEIGHBOUR_QUOTE_CHARS);
      case "after":
        return opening(content, NEIGHBOUR_QUOTE_CHARS);
      default:
        return excerpt(content, terms);
    }
  };
  return [...turns]
    .sort((a, b) => order(a.turn) - order(b.turn))
    .map(({ turn, terms, as }, i, inOrder) => {
      const { speaker, content } = speakerOf(turn, names);
      return `${stamp(turn.occurredAt, inOrder[i - 1]?.turn.occurredAt)}${speaker}: ${text(content, terms, as)}`;
    })
    .join("\n");
}
