/** The embeddings port: text in, unit-length vectors of a fixed dimension out. */
export interface Embedder {
  /** Identifies the vector space; two embedders with the same model give comparable vectors. */
  readonly model: string;
  readonly dimensions: number;
  embed(texts: string[]): Promise<number[][]>;
}

export async function embedOne(embedder: Embedder, text: string): Promise<number[]> {
  const [vector] = await embedder.embed([text]);
  return vector;
}
