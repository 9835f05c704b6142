import { createOpenAiHttp, OpenAiError, type OpenAiHttpOptions } from "@atrium/kit";
import type { Embedder } from "./embedder.js";
import { l2Normalize } from "./vectors.js";

export interface OpenAiEmbedderOptions extends OpenAiHttpOptions {
  model: string;
  /** Sent as `dimensions` (models that support shortening) and checked on every answer. */
  dimensions: number;
  /** Texts per request; default 64. */
  batchSize?: number;
}

interface EmbeddingsResponse {
  data?: { index?: number; embedding?: unknown }[];
}

/** Any OpenAI-compatible `/v1/embeddings`: OpenAI, Ollama, vLLM, TEI. */
export function createOpenAiEmbedder(options: OpenAiEmbedderOptions): Embedder {
  const batchSize = options.batchSize ?? 64;
  const http = createOpenAiHttp(options);

  async function embedBatch(texts: string[]): Promise<number[][]> {
    const answer = (await http.postJson("/embeddings", {
      model: options.model,
      input: texts,
      dimensions: options.dimensions,
      encoding_format: "float",
    })) as EmbeddingsResponse;
    const data = answer.data;
    if (!Array.isArray(data) || data.length !== texts.length) {
      throw new OpenAiError(`embeddings: expected ${texts.length} vectors`);
    }
    const ordered = [...data].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
    return ordered.map(({ embedding }) => {
      if (
        !Array.isArray(embedding) ||
        embedding.length !== options.dimensions ||
        !embedding.every((x) => typeof x === "number")
      ) {
        throw new OpenAiError(
          `embeddings: expected vectors of ${options.dimensions} numbers from model ${options.model}`,
        );
      }
      // Cosine equals the dot product only for unit vectors; not every server normalises.
      return l2Normalize(embedding as number[]);
    });
  }

  return {
    model: options.model,
    dimensions: options.dimensions,
    semantic: true,
    async embed(texts) {
      const out: number[][] = [];
      for (let i = 0; i < texts.length; i += batchSize) {
        out.push(...(await embedBatch(texts.slice(i, i + batchSize))));
      }
      return out;
    },
  };
}
