import type { Turn } from "../store/turns.js";
import { holdsFormOf, isOneOf, WORD } from "./query-focus.js";

/**
 * A word names a speaker when it is in at least this share of one side's turns and at most
 * NOT_SPEAKER_SHARE of the other's: a transcript's `Name:` before every line of one person. A
 * name the other side uses to address them ("Thanks Kate!") is in far fewer of its turns.
 */
const SPEAKER_SHARE = 0.8;
const NOT_SPEAKER_SHARE = 0.1;
/** Fewer turns of a side than this among the candidates say nothing of who it is. */
const MIN_TURNS = 10;

/**
 * The side (user or agent) a question is about, when it names one speaker and not the other:
 * "What are Nicolas's hobbies?" asks what Nicolas said, not what was said to him. Read from the
 * query's common words (`common`, a name in every turn of one speaker is one) and the turns at
 * hand; undefined when no word names a speaker, or both are named.
 */
export function speakerNamed(common: string[], turns: Turn[]): Turn["role"] | undefined {
  if (common.length === 0) return undefined;
  const sides = {
    user: { turns: 0, hits: new Map<string, number>() },
    agent: { turns: 0, hits: new Map<string, number>() },
  };
  const holds = common.map(holdsFormOf);
  for (const turn of turns) {
    const side = sides[turn.role];
    side.turns++;
    for (let i = 0; i < common.length; i++) {
      if (holds[i](turn.content)) side.hits.set(common[i], (side.hits.get(common[i]) ?? 0) + 1);
    }
  }
  if (sides.user.turns < MIN_TURNS || sides.agent.turns < MIN_TURNS) return undefined;
  const share = (role: Turn["role"], lexeme: string) =>
    (sides[role].hits.get(lexeme) ?? 0) / sides[role].turns;
  const named = new Set<Turn["role"]>();
  for (const lexeme of common) {
    for (const [role, other] of [
      ["user", "agent"],
      ["agent", "user"],
    ] as const) {
      if (share(role, lexeme) >= SPEAKER_SHARE && share(other, lexeme) <= NOT_SPEAKER_SHARE)
        named.add(role);
    }
  }
  return named.size === 1 ? [...named][0] : undefined;
}

/**
 * A transcript's `Name: ` before a line: a name of up to four words (letters, digits, `.`, `'`,
 * `-`) and a colon, at the start of the turn.
 */
const NAME_PREFIX = /^(\p{L}[\p{L}\p{M}\p{N}.'’-]*(?: [\p{L}\p{M}\p{N}.'’-]+){0,3}): \S/u;

/** The names a transcript gives each side's speakers, where it gives them. */
export type SpeakerNames = Partial<Record<Turn["role"], ReadonlySet<string>>>;

/** The name a turn's text opens with as a transcript's speaker, if any. */
export function namePrefix(content: string): string | undefined {
  return NAME_PREFIX.exec(content.trimStart())?.[1];
}

/** A name opening fewer than this share of a side's turns is not one of its speakers'. */
const NAME_SHARE = 0.1;
/** A side speaks with this many names at most (people, not a log's labels). */
const MAX_NAMES = 4;

/**
 * The names each side's turns open with, when a few names (each opening at least NAME_SHARE of
 * the side's turns at hand) together open at least SPEAKER_SHARE of them, and no name opens
 * turns of both sides: a transcript stored with its speakers' names, as a conversation between
 * people often is (one person per side, or both stored as the user's). Quoted lines then say who
 * spoke by that name instead of by role. A label such as `Note:` opening a few of a user's turns
 * is no name.
 */
export function speakerNames(turns: Turn[]): SpeakerNames {
  const sides = { user: new Map<string, number>(), agent: new Map<string, number>() };
  const counts = { user: 0, agent: 0 };
  for (const turn of turns) {
    counts[turn.role]++;
    const name = namePrefix(turn.content);
    if (name) sides[turn.role].set(name, (sides[turn.role].get(name) ?? 0) + 1);
  }
  const names: SpeakerNames = {};
  for (const role of ["user", "agent"] as const) {
    if (counts[role] < MIN_TURNS) continue;
    const named = [...sides[role]].filter(([, count]) => count >= NAME_SHARE * counts[role]);
    const opened = named.reduce((sum, [, count]) => sum + count, 0);
    if (named.length <= MAX_NAMES && opened >= SPEAKER_SHARE * counts[role])
      names[role] = new Set(named.map(([name]) => name));
  }
  for (const name of names.user ?? []) if (names.agent?.has(name)) return {};
  return names;
}

/** The shortest word a misspelling is looked for in: "Emi" and "Eli" are two people. */
const MIN_MISSPELT_CHARS = 4;

/** A word's first letter and the consonants after it, each run of a letter once. */
const consonants = (word: string) =>
  word[0] +
  word
    .slice(1)
    .replace(/[aeiouy]/g, "")
    .replace(/(.)\1+/g, "$1");

/** Whether two words differ by one letter changed, added or dropped, or two letters swapped. */
function oneEditApart(a: string, b: string): boolean {
  if (Math.abs(a.length - b.length) > 1) return false;
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  const [long, short] = a.length >= b.length ? [a, b] : [b, a];
  if (long.length !== short.length) return long.slice(i + 1) === short.slice(i);
  const swapped = a[i] === b[i + 1] && a[i + 1] === b[i] && a.slice(i + 2) === b.slice(i + 2);
  return swapped || a.slice(i + 1) === b.slice(i + 1);
}

/**
 * Whether a word of the question is a misspelling of a name's word (both lowercase): the same
 * first letter, and the same consonants in the same order (vowels and doubled letters are where a
 * name is misspelt most: "Muhammad" and "Mohammed" for "Muhhamed", "Faheem" for "Fahim"), or
 * one letter changed, added or dropped ("Akim" for "Akib"), or two swapped ("Nerbaas" for
 * "Nebraas").
 */
function misspells(word: string, nameWord: string): boolean {
  if (word.length < MIN_MISSPELT_CHARS || nameWord.length < MIN_MISSPELT_CHARS) return false;
  if (word[0] !== nameWord[0]) return false;
  const shape = consonants(word);
  return (shape.length >= 3 && shape === consonants(nameWord)) || oneEditApart(word, nameWord);
}

/**
 * The one transcript name (`names`, as speakerNames finds them) the question's words (`lexemes`)
 * name, if they name exactly one: with both people stored as the user the roles cannot tell
 * whose turns "What are Nicolas's hobbies?" asks about, the names can. A word of the question
 * found in no message (`unknown`, as written; a possessive `'s` aside) that is a misspelling of
 * a name's word names it too: people misspell the names of others ("Muhammad" for "Muhhamed":
 * on REALTALK about 50 of 705 questions name a speaker so), and a word that no message holds
 * seldom means anything else there.
 */
export function nameAsked(
  lexemes: string[],
  names: SpeakerNames,
  unknown: string[] = [],
): string | undefined {
  const misspelt = unknown.map((word) => word.toLowerCase().replace(/'s?$/, ""));
  const asked = [...(names.user ?? []), ...(names.agent ?? [])].filter((name) =>
    (name.match(WORD) ?? []).some(
      (word) => isOneOf(word, lexemes) || misspelt.some((m) => misspells(m, word.toLowerCase())),
    ),
  );
  return asked.length === 1 ? asked[0] : undefined;
}
