export { loadMemoryConfig, type MemoryConfig } from "./config/memory-config.js";
export type { Embedder } from "./embeddings/embedder.js";
export { createGloveEmbedder, type GloveEmbedderOptions } from "./embeddings/glove-embedder.js";
export { createHashEmbedder } from "./embeddings/hash-embedder.js";
export { createOpenAiEmbedder } from "./embeddings/openai-embedder.js";
export { createWeightedHashEmbedder } from "./embeddings/weighted-hash-embedder.js";
export { createOpenAiLlm, type Llm } from "./llm/llm.js";
export {
  createRetrieval,
  type Retrieval,
  type RetrievalOptions,
  type RetrievalQuery,
  type RetrievedPage,
} from "./retrieval/retrieval.js";
export { createMemoryService, type MemoryServiceDeps } from "./service/memory-service.js";
export { memoryOperatorOpenApiDocument } from "./service/operator-description.js";
export {
  type StartMemoryServiceOptions,
  startMemoryService,
} from "./service/start-memory-service.js";
export { createLexicalSearch, type LexicalSearch } from "./store/lexical-search.js";
export { migrateMemory } from "./store/migrate.js";
export {
  createVectorSearch,
  type VectorSearch,
  type VectorSearchOptions,
} from "./store/vector-search.js";
