import nlp from "compromise";
import { tokenize } from "../embeddings/hash-embedder.js";
import { leadingPart } from "./analysis-budget.js";

export type EntityType = "person" | "place" | "organization" | "thing";

export interface ExtractedEntity {
  name: string;
  type: EntityType;
}

export interface ExtractedRelation {
  subject: string;
  relation: string;
  object: string;
  /** In [0, 1]. */
  confidence: number;
}

/** What the pipeline knows about a chain's text, from the LLM or from the fallbacks here. */
export interface ChainAnalysis {
  summary: string;
  topic: string;
  /** In [0, 1]. */
  importance: number;
  entities: ExtractedEntity[];
  relations: ExtractedRelation[];
  /** `llm` or `extractive`, kept on the chain so a reader knows how it was made. */
  method: "llm" | "extractive";
}

const STOPWORDS = new Set(
  (
    "a about above after again against all am an and any are as at be because been before being below between both but by can could did do does doing down during each few for from further had has have having he her here hers herself him himself his how i if in into is it its itself just let lets me more most my myself no nor not now of off on once only or other our ours ourselves out over own same she should so some such than that the their theirs them themselves then there these they this those through to too under until up very was we were what when where which while who whom why will with would you your yours yourself yourselves " +
    "also yes okay ok sure thanks thank please hi hello hey really like get got want need know think going go well one would could much many im dont cant ive youre thats"
  ).split(/\s+/),
);

// Contractions split into fragments on the apostrophe ("I'll" → "ll", "don't" → "don"), which
// then ranked as content words: chain topics read "agent, ll, keep". They are expanded first.
const IRREGULAR_NEGATIONS: [RegExp, string][] = [
  [/\bwon['’]t\b/giu, "will not"],
  [/\bcan['’]t\b/giu, "can not"],
  [/\bshan['’]t\b/giu, "shall not"],
];
const NEGATION = /(\p{L})n['’]t\b/giu;
const CONTRACTED_SUFFIX = /(\p{L})['’](?:ll|re|ve|d|m|s)\b/giu;

function expandContractions(text: string): string {
  let expanded = text;
  for (const [pattern, replacement] of IRREGULAR_NEGATIONS) {
    expanded = expanded.replace(pattern, replacement);
  }
  return expanded.replace(NEGATION, "$1 not").replace(CONTRACTED_SUFFIX, "$1");
}

export function contentWords(text: string): string[] {
  return tokenize(expandContractions(text)).filter(
    (w) => w.length > 1 && !STOPWORDS.has(w) && !/^\d+$/.test(w),
  );
}

function cleanName(raw: string): string {
  return raw
    .replace(/['’]s\b/g, "")
    .replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, "")
    .replace(/\s+/g, " ")
    .trim();
}

type Doc = ReturnType<typeof nlp>;

/** Named entities of a tagged document: people, places, organisations, other proper nouns. */
function entitiesOf(doc: Doc): ExtractedEntity[] {
  const found = new Map<string, ExtractedEntity>();
  const add = (names: string[], type: EntityType) => {
    for (const raw of names) {
      const name = cleanName(raw);
      if (name.length < 2) continue;
      const key = name.toLowerCase();
      if (!found.has(key)) found.set(key, { name, type });
    }
  };
  add(doc.people().out("array") as string[], "person");
  add(doc.places().out("array") as string[], "place");
  add(doc.organizations().out("array") as string[], "organization");
  add(doc.match("#ProperNoun+").not("#Pronoun").out("array") as string[], "thing");
  return [...found.values()];
}

/** Named entities by compromise's tagger (the expensive part of compromise: parse text once). */
export function extractEntities(text: string): ExtractedEntity[] {
  return entitiesOf(nlp(text));
}

// Chain text starts every line with its speaker ("User: …"): not a word the user said.
const SPEAKER_LABEL = /^(?:User|Agent): /gm;

/** Ranked content words: frequency, ties broken by first appearance. */
export function keywords(text: string, n: number): string[] {
  const counts = new Map<string, number>();
  for (const w of contentWords(text.replace(SPEAKER_LABEL, ""))) {
    counts.set(w, (counts.get(w) ?? 0) + 1);
  }
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([w]) => w);
}

/** A short topic label from the most frequent content words. */
export function keywordTopic(text: string): string {
  const top = keywords(text, 3);
  return top.length > 0 ? top.join(", ") : "general";
}

const sentencesOf = (doc: Doc) =>
  (doc.sentences().out("array") as string[]).map((s) => s.trim()).filter(Boolean);

/**
 * Sentences by compromise's tokenizer alone: the same split as a full parse at a seventh of the
 * cost, since sentence boundaries do not need the tagger.
 */
export function splitSentences(text: string): string[] {
  return sentencesOf(nlp.tokenize(text));
}

/**
 * Extractive summary: the sentences whose content words are most frequent in the whole text,
 * in their original order, within `maxChars`.
 */
export function extractiveSummary(text: string, maxChars = 400): string {
  return summaryOf(text, splitSentences(text), maxChars);
}

function summaryOf(text: string, sentences: string[], maxChars = 400): string {
  if (sentences.length === 0) return "";
  const freq = new Map<string, number>();
  for (const w of contentWords(text)) freq.set(w, (freq.get(w) ?? 0) + 1);
  const scored = sentences.map((s, index) => {
    const words = contentWords(s);
    const score =
      words.reduce((sum, w) => sum + (freq.get(w) ?? 0), 0) / Math.sqrt(words.length || 1);
    return { s, index, score };
  });
  const chosen: typeof scored = [];
  let length = 0;
  for (const candidate of [...scored].sort((a, b) => b.score - a.score)) {
    if (length + candidate.s.length > maxChars && chosen.length > 0) continue;
    chosen.push(candidate);
    length += candidate.s.length + 1;
    if (length >= maxChars) break;
  }
  const summary = chosen
    .sort((a, b) => a.index - b.index)
    .map((c) => c.s)
    .join(" ");
  return summary.length > maxChars ? `${summary.slice(0, maxChars - 1)}…` : summary;
}

/** Share of distinct content words among all words: repetitive small talk scores low. */
export function informationDensity(text: string): number {
  const all = tokenize(text);
  if (all.length === 0) return 0;
  return new Set(contentWords(text)).size / all.length;
}

/**
 * Importance without an LLM: a neutral base raised by named entities and concrete figures, the
 * things a user most often comes back for.
 */
export function heuristicImportance(text: string, entities: ExtractedEntity[]): number {
  let importance = 0.4;
  importance += Math.min(0.3, 0.1 * entities.length);
  if (/\d/.test(text)) importance += 0.1;
  if (contentWords(text).length >= 12) importance += 0.1;
  return Math.min(1, importance);
}

/**
 * Relations without an LLM: entities named in the same sentence are related, more confidently
 * the shorter the sentence.
 */
export function cooccurrenceRelations(
  sentences: string[],
  entities: ExtractedEntity[],
): ExtractedRelation[] {
  const relations = new Map<string, ExtractedRelation>();
  for (const sentence of sentences) {
    const lower = sentence.toLowerCase();
    const present = entities.filter((e) => lower.includes(e.name.toLowerCase()));
    const confidence = Math.max(0.3, Math.min(0.8, 8 / Math.max(8, tokenize(sentence).length)));
    for (let i = 0; i < present.length; i++) {
      for (let j = i + 1; j < present.length; j++) {
        const [a, b] = [present[i].name, present[j].name].sort();
        const key = `${a.toLowerCase()}\0${b.toLowerCase()}`;
        const existing = relations.get(key);
        if (!existing || existing.confidence < confidence) {
          relations.set(key, { subject: a, relation: "mentioned_with", object: b, confidence });
        }
      }
    }
  }
  return [...relations.values()];
}

/**
 * What a text gets when its analysis ran out of time: its leading words as summary and the
 * topic and importance from its words, without entities or relations (the tagger's part).
 * Cheap enough for the calling thread: a few milliseconds on an analysis budget of text.
 */
export function degradedAnalysis(text: string): ChainAnalysis {
  return {
    summary: leadingSummary(text),
    topic: keywordTopic(text),
    importance: heuristicImportance(text, []),
    entities: [],
    relations: [],
    method: "extractive",
  };
}

/** The text's leading words, without speaker labels, within `maxChars`. */
export function leadingSummary(text: string, maxChars = 400): string {
  const words = text
    .slice(0, maxChars * 4)
    .replace(SPEAKER_LABEL, "")
    .replace(/\s+/g, " ")
    .trim();
  return leadingPart(words, maxChars);
}

export function extractiveAnalysis(text: string): ChainAnalysis {
  // One tagged parse serves entities and sentences alike.
  const doc = nlp(text);
  const entities = entitiesOf(doc);
  const sentences = sentencesOf(doc);
  return {
    summary: summaryOf(text, sentences),
    topic: keywordTopic(text),
    importance: heuristicImportance(text, entities),
    entities,
    relations: cooccurrenceRelations(sentences, entities),
    method: "extractive",
  };
}

/**
 * The analysis of two chains' joined text (`content`) from theirs, without tagging it again: the
 * tagger's entities and relations of both, the summary's sentences chosen from both summaries by
 * the joined text's word frequencies, topic and importance from the joined text. A merge used to
 * tag the first CHAIN_ANALYSIS_CHARS of the joined text, mostly the older chain's, read and tagged
 * when it closed, so the part merged in could go unread: with replies of 2,500 characters, 405
 * merges took 29.7 s of the tagger's 40.7 (bench/memory/long-turns.ts).
 */
export function mergedAnalysis(
  into: ChainAnalysis,
  added: ChainAnalysis,
  content: string,
): ChainAnalysis {
  const entities = new Map<string, ExtractedEntity>();
  for (const entity of [...into.entities, ...added.entities]) {
    const key = entity.name.toLowerCase();
    if (!entities.has(key)) entities.set(key, entity);
  }
  const relations = new Map<string, ExtractedRelation>();
  for (const relation of [...into.relations, ...added.relations]) {
    const key = [relation.subject, relation.relation, relation.object].join("\0").toLowerCase();
    const known = relations.get(key);
    if (!known || known.confidence < relation.confidence) relations.set(key, relation);
  }
  const sentences = [...splitSentences(into.summary), ...splitSentences(added.summary)];
  return {
    summary: summaryOf(content, sentences),
    topic: keywordTopic(content),
    importance: heuristicImportance(content, [...entities.values()]),
    entities: [...entities.values()],
    relations: [...relations.values()],
    method: "extractive",
  };
}
