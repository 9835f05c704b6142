import type { Turn } from "../store/turns.js";
import { holdsFormOf } from "./query-focus.js";

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
