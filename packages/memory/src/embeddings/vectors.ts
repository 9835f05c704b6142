/** Cosine similarity in [-1, 1]; 0 when either vector is all zeros (no evidence either way). */
export function cosineSimilarity(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new Error(`vector lengths differ: ${a.length} and ${b.length}`);
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  if (na === 0 || nb === 0) return 0;
  return dot / Math.sqrt(na * nb);
}

/** Scales to unit length; the zero vector stays zero. */
export function l2Normalize(v: ArrayLike<number>): number[] {
  let norm = 0;
  for (let i = 0; i < v.length; i++) norm += v[i] * v[i];
  norm = Math.sqrt(norm);
  const out = new Array<number>(v.length);
  for (let i = 0; i < v.length; i++) out[i] = norm === 0 ? 0 : v[i] / norm;
  return out;
}

/** Normalised mean of unit vectors: the direction a group of texts points in. */
export function centroid(vectors: ArrayLike<number>[]): number[] {
  if (vectors.length === 0) throw new Error("centroid of no vectors");
  const sum = new Array<number>(vectors[0].length).fill(0);
  for (const v of vectors) for (let i = 0; i < v.length; i++) sum[i] += v[i];
  return l2Normalize(sum);
}
