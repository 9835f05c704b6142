/**
 * How much text chain analysis reads. A message can be a megabyte (a pasted log, a document):
 * its leading part is analysed, not bounded pieces of all of it, because the start of a long
 * message is what says what it is, and because pieces would still cost time in proportion to
 * the message while the analysis keeps only a summary, a topic and a few entities. The
 * message itself is stored and searchable whole; only what the analysis reads is cut.
 */

/**
 * Every budget of the chain check is declared here, once; docs/memory.md ("Chain analysis is
 * bounded, per tenant") states them.
 */

/** Characters of one message the analysis reads: its leading part. */
export const MESSAGE_ANALYSIS_CHARS = 4000;
/** Characters of a chain's text one analysis reads (its messages' leading parts, in order). */
export const CHAIN_ANALYSIS_CHARS = 16_000;
/**
 * Characters one embedding reads (a message's leading part, a chain's newest part): embedding
 * models have input limits, and the cost of an embedding grows with its input.
 */
export const EMBED_CHARS = 6000;
/**
 * Wall time one analysis task may run on its thread; past it the thread is terminated and the
 * chain gets a degraded analysis (text-analysis-pool.ts).
 */
export const ANALYSIS_TASK_MS = 5000;
/**
 * Time one chain check job spends on its scope; past it the job stops at the next message and
 * queues the rest behind the other scopes' jobs (chain-check-worker.ts).
 */
export const CHAIN_CHECK_JOB_MS = 5000;

/** The leading `maxChars` of `text`, cut at a word boundary when one is near, marked with "…". */
export function leadingPart(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const cut = text.slice(0, maxChars);
  const space = cut.search(/\s\S*$/);
  // A word is rarely longer than this; a longer run without a space is cut where it stands.
  const nearWord = space > 0 && space >= maxChars - 80;
  return `${nearWord ? cut.slice(0, space) : cut}…`;
}

// A chain's text is its messages, each on lines starting with its speaker.
const MESSAGE_START = /\n(?=(?:User|Agent): )/g;

/**
 * The text of a chain that analysis reads: each message's leading part, up to the chain's
 * budget. Reads no further into `content` than the messages it keeps need, plus one search for
 * where each next message starts.
 */
export function analysisText(content: string): string {
  if (content.length <= MESSAGE_ANALYSIS_CHARS) return content;
  const parts: string[] = [];
  let length = 0;
  let start = 0;
  while (start < content.length && length < CHAIN_ANALYSIS_CHARS) {
    MESSAGE_START.lastIndex = start;
    const next = MESSAGE_START.exec(content);
    const end = next ? next.index : content.length;
    const part = leadingPart(
      content.slice(start, Math.min(end, start + MESSAGE_ANALYSIS_CHARS + 1)),
      MESSAGE_ANALYSIS_CHARS,
    );
    parts.push(part);
    length += part.length + 1;
    start = end + 1;
  }
  return leadingPart(parts.join("\n"), CHAIN_ANALYSIS_CHARS);
}
