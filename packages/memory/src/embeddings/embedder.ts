/** The embeddings port: text in, unit-length vectors of a fixed dimension out. */
export interface Embedder {
  /** Identifies the vector space; two embedders with the same model give comparable vectors. */
  readonly model: string;
  readonly dimensions: number;
  /**
   * True for a trained model, whose vectors know that "sofa" is near "couch"; false for the
   * hashing embedders, whose vectors only restate the words a text shares with another.
   * Retrieval gives the vector side the weight that follows from it.
   */
  readonly semantic: boolean;
  embed(texts: string[]): Promise<number[][]>;
  /**
   * For each text, how close its words come to the question's, 0–1: each question word's best
   * cosine to a word of the text, weighted by the question word's rarity. Where one averaged
   * vector per text blurs a question about "food" into a long turn that names "fries" in
   * passing, this finds the turn. Only an embedder with word vectors (`glove`) has it.
   */
  wordCloseness?(question: string, texts: string[]): number[];
}

export async function embedOne(embedder: Embedder, text: string): Promise<number[]> {
  const [vector] = await embedder.embed([text]);
  return vector;
}
