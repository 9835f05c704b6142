// REALTALK (Lee et al. 2025, github.com/danny911kr/REALTALK): 10 real 21-day messaging chats
// between two people, with memory-probing questions naming their evidence turns. The data has
// no licence, so it is never copied here: the benchmark reads the chats from a directory given
// on the command line (the repository's `data/Chat_*.json`).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * The question categories. The REALTALK README does not name them; its scorer
 * (eval_memory/qa_tool.py) scores 1 as a list of answers from several turns and lets 3 give
 * alternatives, and the paper calls them multi-hop, temporal reasoning and commonsense (open
 * domain): "When did …" questions are all 2.
 */
export const REALTALK_KINDS = { 1: "multi-hop", 2: "temporal", 3: "open-domain" } as const;
export type RealtalkKind = (typeof REALTALK_KINDS)[keyof typeof REALTALK_KINDS];

export interface RealtalkTurn {
  /** `D3:14`: session 3, turn 14, as the questions' evidence names it. */
  id: string;
  chat: string;
  session: number;
  speaker: string;
  /** speaker_1 of the chat is stored as the user, the other as the agent. */
  role: "user" | "agent";
  text: string;
  /** ISO, from the turn's own `DD.MM.YYYY, HH:MM:SS` (no zone given: read as UTC). */
  timestamp: string;
}

export interface RealtalkQuestion {
  id: string;
  chat: string;
  text: string;
  answer: string;
  kind: RealtalkKind;
  /** Evidence turn ids that exist in the chat (some annotations name deleted turns). */
  evidence: string[];
}

export interface RealtalkChat {
  name: string;
  turns: RealtalkTurn[];
  questions: RealtalkQuestion[];
  /** Questions dropped because none of their evidence ids is a turn of the chat. */
  unresolved: number;
}

interface RawTurn {
  clean_text?: string;
  text?: string;
  speaker: string;
  date_time: string;
  dia_id: string;
}

interface RawChat {
  name: { speaker_1: string; speaker_2: string };
  qa: { question: string; answer: unknown; evidence: string[]; category: number }[];
  [key: string]: unknown;
}

function isoOf(dateTime: string): string {
  const match = /^(\d{2})\.(\d{2})\.(\d{4}), (\d{2}):(\d{2}):(\d{2})$/.exec(dateTime.trim());
  if (!match) throw new Error(`unreadable date_time ${JSON.stringify(dateTime)}`);
  const [, day, month, year, hh, mm, ss] = match;
  return `${year}-${month}-${day}T${hh}:${mm}:${ss}Z`;
}

/**
 * Evidence as annotated: `D5:12`, but also `D5:12;D5:16`, `D12:3-D12:5`, `D13:45:D20:19` and
 * trailing dots. Ranges within a session are expanded.
 */
export function evidenceIds(evidence: string[]): string[] {
  const ids: string[] = [];
  for (const entry of evidence) {
    for (const part of entry.split(/[;,\s]+/)) {
      const refs = [...part.matchAll(/D(\d+):(\d+)/g)].map((m) => [Number(m[1]), Number(m[2])]);
      if (refs.length === 2 && part.includes("-") && refs[0][0] === refs[1][0]) {
        for (let turn = refs[0][1]; turn <= refs[1][1]; turn++) ids.push(`D${refs[0][0]}:${turn}`);
      } else {
        for (const [session, turn] of refs) ids.push(`D${session}:${turn}`);
      }
    }
  }
  return [...new Set(ids)];
}

export function loadRealtalk(dir: string): RealtalkChat[] {
  const files = readdirSync(dir)
    .filter((f) => /^Chat_\d+_.*\.json$/.test(f))
    .sort((a, b) => Number(a.split("_")[1]) - Number(b.split("_")[1]));
  if (files.length === 0) throw new Error(`no Chat_*.json in ${dir}`);
  return files.map((file) => {
    const raw = JSON.parse(readFileSync(join(dir, file), "utf8")) as RawChat;
    const chat = file.replace(/\.json$/, "");
    const sessions = Object.keys(raw)
      .filter((k) => /^session_\d+$/.test(k))
      .sort((a, b) => Number(a.slice(8)) - Number(b.slice(8)));
    const turns: RealtalkTurn[] = sessions.flatMap((key) =>
      (raw[key] as RawTurn[])
        .map((t) => ({ ...t, text: (t.clean_text ?? t.text ?? "").trim() }))
        .filter((t) => t.text.length > 0)
        .map((t) => ({
          id: t.dia_id,
          chat,
          session: Number(key.slice(8)),
          speaker: t.speaker,
          role: t.speaker === raw.name.speaker_1 ? ("user" as const) : ("agent" as const),
          text: t.text,
          timestamp: isoOf(t.date_time),
        })),
    );
    const known = new Set(turns.map((t) => t.id));
    const questions: RealtalkQuestion[] = [];
    let unresolved = 0;
    raw.qa.forEach((qa, i) => {
      const kind = REALTALK_KINDS[qa.category as keyof typeof REALTALK_KINDS];
      if (!kind) throw new Error(`${file}: unknown category ${qa.category}`);
      const evidence = evidenceIds(qa.evidence).filter((id) => known.has(id));
      if (evidence.length === 0) {
        unresolved++;
        return;
      }
      questions.push({
        id: `${chat}#${i}`,
        chat,
        text: qa.question,
        answer: String(qa.answer),
        kind,
        evidence,
      });
    });
    return { name: chat, turns, questions, unresolved };
  });
}

/** What is stored and what BM25 indexes: the turn with its speaker's name, as a chat log shows it. */
export const spokenText = (turn: RealtalkTurn) => `${turn.speaker}: ${turn.text}`;
