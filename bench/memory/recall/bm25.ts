// The baseline a memory service has to beat: Okapi BM25 (k1 = 1.2, b = 0.75) over one user's
// raw turns, lowercase word tokens, no stemming, a short stopword list. What an agent gets by
// grepping its own transcript with a textbook ranking.

const STOPWORDS = new Set(
  (
    "a an and are as at be but by did do does for from had has have i in is it its me my of on " +
    "or our so that the their them they this to was we were what when where which who will with you your"
  ).split(" "),
);

export const tokenize = (text: string) =>
  (text.toLowerCase().match(/[a-z0-9]+/g) ?? []).filter((token) => !STOPWORDS.has(token));

export class Bm25<T extends { text: string }> {
  private readonly docs: { item: T; tf: Map<string, number>; length: number }[];
  private readonly df = new Map<string, number>();
  private readonly avgLength: number;

  constructor(items: T[]) {
    this.docs = items.map((item) => {
      const tokens = tokenize(item.text);
      const tf = new Map<string, number>();
      for (const token of tokens) tf.set(token, (tf.get(token) ?? 0) + 1);
      for (const token of tf.keys()) this.df.set(token, (this.df.get(token) ?? 0) + 1);
      return { item, tf, length: tokens.length };
    });
    this.avgLength = this.docs.reduce((sum, d) => sum + d.length, 0) / this.docs.length;
  }

  /** The k best items, best first; items that share no term with the query are never returned. */
  search(query: string, k: number): T[] {
    const k1 = 1.2;
    const b = 0.75;
    const n = this.docs.length;
    const terms = [...new Set(tokenize(query))];
    return this.docs
      .map((doc) => {
        let score = 0;
        for (const term of terms) {
          const tf = doc.tf.get(term);
          if (!tf) continue;
          const df = this.df.get(term) ?? 0;
          const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
          score += (idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * doc.length) / this.avgLength));
        }
        return { item: doc.item, score };
      })
      .filter((scored) => scored.score > 0)
      .sort((x, y) => y.score - x.score)
      .slice(0, k)
      .map((scored) => scored.item);
  }
}
