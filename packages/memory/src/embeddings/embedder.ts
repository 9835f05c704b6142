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
}

export async function embedOne(embedder: Embedder, text: string): Promise<number[]> {
  const [vector] = await embedder.embed([text]);
  return vector;
}
