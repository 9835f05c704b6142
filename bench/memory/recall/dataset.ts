/**
 * The recall benchmark's data: three users, each chatting with an assistant over 24 sessions
 * days or weeks apart (16 exchanges a session, 768 turns a user). Most turns are small talk on
 * the same eight topics the facts belong to; each fact is stated once, in one user turn, and
 * asked about only after the last session. Deterministic: a seeded PRNG, the same data on every
 * run. `generateDataset` throws if an evidence turn is ambiguous (one of its sentences occurs in
 * another turn) or does not contain its answer, so a template change cannot silently break it.
 */

import { seededRandom } from "../../lib/random.js";
import {
  AGENT_FOLLOW_UPS,
  AGENT_LINES,
  ATTRIBUTES,
  type FactTemplate,
  FILL,
  FOLLOW_UPS,
  NAMES,
  PASSING,
  RELATIONS,
  SINGLE_HOP,
  TEMPORAL,
  TOPICS,
  type Topic,
  USER_LINES,
} from "./content.js";
import { identifyingSentences, normalize } from "./text.js";

export type Kind = "single-hop" | "multi-hop" | "temporal" | "passing";
export const KINDS: Kind[] = ["single-hop", "multi-hop", "temporal", "passing"];

export interface Turn {
  id: string;
  userId: string;
  session: number;
  speaker: "user" | "assistant";
  text: string;
  /** ISO 8601, UTC. */
  timestamp: string;
}

export interface Question {
  id: string;
  userId: string;
  kind: Kind;
  text: string;
  /** Occurs literally (case-insensitively) in one of the evidence turns or, for temporal
   * questions answered by a date, in the evidence turn's timestamp. */
  answer: string;
  evidence: string[];
  evidenceTimestamps: string[];
}

export interface Dataset {
  users: string[];
  turns: Turn[];
  questions: Question[];
}

const USERS = ["maya", "tomas", "ines"];
const SESSIONS = 24;
const EXCHANGES = 16;
/** Facts are stated in the first sessions only, so every question reaches back a while. */
const LAST_FACT_SESSION = 19;
const DAY = 86_400_000;

type Rng = ReturnType<typeof seededRandom>;

/** A user line planned for a session: a fact's evidence, a decoy, or (later) small talk. */
interface Planned {
  topic: Topic;
  text: string;
  /** For evidence lines: the question and, for dates in the words, the days after the session. */
  evidenceOf?: { question: number; dateInDays?: number };
}

const fillSlots = (rng: Rng, line: string) =>
  line
    .replaceAll("{city}", () => rng.pick(FILL.city))
    .replaceAll("{dish}", () => rng.pick(FILL.dish))
    .replaceAll("{day}", () => rng.pick(FILL.day))
    .replaceAll("{friend}", () => rng.pick(FILL.friend))
    .replaceAll("{n}", () => String(rng.int(2, 12)));

const monthDay = (ms: number) =>
  new Date(ms).toLocaleDateString("en-US", { month: "long", day: "numeric", timeZone: "UTC" });

function generateUser(userId: string, userIndex: number, seed: number) {
  const rng = seededRandom(seed * 7919 + userIndex);
  const plan: Planned[][] = Array.from({ length: SESSIONS }, () => []);
  const questions: Omit<Question, "evidence" | "evidenceTimestamps">[] = [];
  const factSession = () => rng.int(0, LAST_FACT_SESSION);
  const elsewhere = (session: number) => (session + rng.int(1, SESSIONS - 1)) % SESSIONS;
  const decoys = (template: { topic: Topic; decoys: string[] }, session: number) => {
    // One decoy in the fact's own session (same topic, same day), the rest anywhere; but never
    // a temporal fact's day, whose date would then answer the question.
    const temporal = TEMPORAL.some((t) => t === template);
    template.decoys.forEach((text, i) => {
      plan[temporal ? elsewhere(session) : i === 0 ? session : rng.int(0, SESSIONS - 1)].push({
        topic: template.topic,
        text: text.length < 60 ? `${text} ${rng.pick(FOLLOW_UPS)}` : text,
      });
    });
  };
  const addFact = (kind: Kind, template: FactTemplate) => {
    const answer = rng.pick(template.values);
    const session = factSession();
    plan[session].push({
      topic: template.topic,
      text: template.say(answer),
      evidenceOf: { question: questions.length },
    });
    questions.push({
      id: `${userId}-q${questions.length}`,
      userId,
      kind,
      text: template.ask,
      answer,
    });
    decoys(template, session);
  };
  for (const template of SINGLE_HOP) addFact("single-hop", template);
  for (const template of PASSING) addFact("passing", template);
  for (const template of TEMPORAL) {
    const session = factSession();
    const dateInDays = template.inText ? rng.int(5, 40) : undefined;
    plan[session].push({
      topic: template.topic,
      // The date is known once the session's timestamps are; filled in below.
      text: template.say("{date}"),
      evidenceOf: { question: questions.length, dateInDays },
    });
    questions.push({
      id: `${userId}-q${questions.length}`,
      userId,
      kind: "temporal",
      text: template.ask,
      answer: "",
    });
    decoys(template, session);
  }
  // Multi-hop: sixteen people, each introduced by one attribute and later given another.
  const values = new Map(ATTRIBUTES.map((a) => [a, rng.shuffle(a.values)]));
  const names = rng.shuffle(NAMES);
  const relations = rng.shuffle(RELATIONS);
  for (let person = 0; person < 16; person++) {
    const first = ATTRIBUTES[person % ATTRIBUTES.length];
    const second = rng.pick(
      ATTRIBUTES.filter((a) => a !== first && (values.get(a)?.length ?? 0) > 0),
    );
    const firstValue = values.get(first)?.pop() as string;
    const secondValue = values.get(second)?.pop() as string;
    const name = names[person];
    const introduced = rng.int(0, LAST_FACT_SESSION - 5);
    const question = questions.length;
    plan[introduced].push({
      topic: first.topic,
      text: first.introduce(relations[person], name, firstValue),
      evidenceOf: { question },
    });
    plan[rng.int(introduced + 3, LAST_FACT_SESSION)].push({
      topic: second.topic,
      text: second.mention(name, secondValue),
      evidenceOf: { question },
    });
    questions.push({
      id: `${userId}-q${question}`,
      userId,
      kind: "multi-hop",
      text: second.ask(first.who(firstValue)),
      answer: secondValue,
    });
  }

  const turns: Turn[] = [];
  const evidence = questions.map(() => [] as Turn[]);
  let clock = Date.UTC(2025, 8 + userIndex, 2, 0, 0, 0);
  for (let session = 0; session < SESSIONS; session++) {
    clock += rng.int(3, 16) * DAY;
    const start = clock - (clock % DAY) + rng.int(8 * 60, 21 * 60) * 60_000;
    // The session's topics: those of its facts, plus one or two for the small talk.
    const topics = new Set<Topic>(plan[session].map((p) => p.topic));
    while (topics.size < 2 || (topics.size < 3 && rng.next() < 0.5)) topics.add(rng.pick(TOPICS));
    const lines = [...plan[session]];
    while (lines.length < EXCHANGES) {
      const topic = rng.pick([...topics]);
      const text = fillSlots(rng, rng.pick(USER_LINES[topic]));
      lines.push({
        topic,
        text: text.length < 60 || rng.next() < 0.4 ? `${text} ${rng.pick(FOLLOW_UPS)}` : text,
      });
    }
    let at = start;
    for (const [exchange, line] of rng.shuffle(lines).entries()) {
      const timestamp = new Date(at).toISOString();
      let text = line.text;
      const of = line.evidenceOf;
      if (of?.dateInDays !== undefined) {
        const date = monthDay(start + of.dateInDays * DAY);
        text = text.replace("{date}", date);
        questions[of.question].answer = date;
      } else if (of && questions[of.question].kind === "temporal") {
        questions[of.question].answer = timestamp.slice(0, 10);
      }
      const userTurn: Turn = {
        id: `${userId}-s${session}-t${exchange * 2}`,
        userId,
        session,
        speaker: "user",
        text,
        timestamp,
      };
      if (of) evidence[of.question].push(userTurn);
      at += rng.int(20, 150) * 1000;
      const reply = rng.pick(AGENT_LINES[line.topic]);
      turns.push(userTurn, {
        id: `${userId}-s${session}-t${exchange * 2 + 1}`,
        userId,
        session,
        speaker: "assistant",
        text:
          reply.length < 60 || rng.next() < 0.3 ? `${reply} ${rng.pick(AGENT_FOLLOW_UPS)}` : reply,
        timestamp: new Date(at).toISOString(),
      });
      at += rng.int(20, 150) * 1000;
    }
  }
  return {
    turns,
    questions: questions.map((q, i) => ({
      ...q,
      evidence: evidence[i].map((t) => t.id),
      evidenceTimestamps: evidence[i].map((t) => t.timestamp),
    })),
    evidenceTurns: evidence,
  };
}

/** Throws unless every evidence turn is unambiguous and holds (or is dated with) its answer. */
function check(turns: Turn[], questions: Question[], evidenceTurns: Turn[][]) {
  const owners = new Map<string, Set<string>>();
  for (const turn of turns)
    for (const sentence of identifyingSentences(turn.text))
      owners.set(sentence, (owners.get(sentence) ?? new Set()).add(turn.id));
  questions.forEach((q, i) => {
    const found = evidenceTurns[i];
    if (found.length !== (q.kind === "multi-hop" ? 2 : 1))
      throw new Error(`${q.id}: ${found.length} evidence turns`);
    for (const turn of found) {
      const sentences = identifyingSentences(turn.text);
      if (sentences.length === 0 || sentences.some((s) => owners.get(s)?.size !== 1))
        throw new Error(`${q.id}: evidence turn ${turn.id} is not unambiguous`);
    }
    const answer = normalize(q.answer);
    if (!answer || !found.some((t) => normalize(`${t.timestamp} ${t.text}`).includes(answer)))
      throw new Error(`${q.id}: answer ${JSON.stringify(q.answer)} not in its evidence`);
  });
}

export function generateDataset(seed = 2026): Dataset {
  const dataset: Dataset = { users: USERS, turns: [], questions: [] };
  USERS.forEach((userId, index) => {
    const { turns, questions, evidenceTurns } = generateUser(userId, index, seed);
    check(turns, questions, evidenceTurns);
    dataset.turns.push(...turns);
    dataset.questions.push(...questions);
  });
  return dataset;
}
