import assert from "node:assert/strict";
import { test } from "node:test";
import { loadMemoryConfig } from "./memory-config.js";

test("embedded defaults: ports 8080/9090, GloVe embeddings, no LLM, no blob store", () => {
  const config = loadMemoryConfig({});
  assert.equal(config.MEMORY_REST_PORT, 8080);
  assert.equal(config.MEMORY_GRPC_PORT, 9090);
  assert.equal(config.DATABASE_URL, undefined);
  assert.equal(config.ATRIUM_DATA_DIR, "./data");
  assert.equal(config.EMBEDDINGS_PROVIDER, "glove");
  assert.equal(config.EMBEDDINGS_DIMENSIONS, 384);
  assert.equal(config.LLM_BASE_URL, undefined);
  assert.equal(config.BLOB_STORE_URL, undefined);
  assert.equal(config.MEMORY_CHAIN_GAP, 30 * 60_000);
  assert.equal(config.MEMORY_SEARCH_MODE, "hybrid");
});

test("port 0 is allowed; a malformed value stops start-up naming the variable", () => {
  assert.equal(loadMemoryConfig({ MEMORY_REST_PORT: "0" }).MEMORY_REST_PORT, 0);
  assert.throws(() => loadMemoryConfig({ MEMORY_GRPC_PORT: "ninety" }), /MEMORY_GRPC_PORT/);
  assert.throws(() => loadMemoryConfig({ EMBEDDINGS_PROVIDER: "magic" }), /EMBEDDINGS_PROVIDER/);
  assert.throws(() => loadMemoryConfig({ DATABASE_URL: "mysql://x" }), /DATABASE_URL/);
  assert.throws(() => loadMemoryConfig({ LLM_TIMEOUT: "30" }), /LLM_TIMEOUT/);
  assert.throws(() => loadMemoryConfig({ MEMORY_SEARCH_MODE: "fuzzy" }), /MEMORY_SEARCH_MODE/);
  assert.equal(loadMemoryConfig({ EMBEDDINGS_PROVIDER: "hash" }).EMBEDDINGS_PROVIDER, "hash");
});

test("AUTO_MIGRATE reads as the broker reads it: true, false, 1 or 0", () => {
  assert.equal(loadMemoryConfig({}).AUTO_MIGRATE, true);
  assert.equal(loadMemoryConfig({ AUTO_MIGRATE: "0" }).AUTO_MIGRATE, false);
  assert.equal(loadMemoryConfig({ AUTO_MIGRATE: "TRUE" }).AUTO_MIGRATE, true);
  assert.throws(() => loadMemoryConfig({ AUTO_MIGRATE: "sometimes" }), /AUTO_MIGRATE/);
});
