import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type FakeOpenAi, startFakeOpenAi } from "../testing/fake-openai.js";
import { createCachedEmbedder, embeddingCacheKey } from "./cached-embedder.js";
import { createGloveEmbedder } from "./glove-embedder.js";
import { createHashEmbedder } from "./hash-embedder.js";
import { createOpenAiEmbedder } from "./openai-embedder.js";
import { cosineSimilarity } from "./vectors.js";
import { createWeightedHashEmbedder } from "./weighted-hash-embedder.js";

describe("hash embedder", () => {
  const embedder = createHashEmbedder();

  test("384 unit-length dimensions, deterministic across instances", async () => {
    const [a] = await embedder.embed(["The quick brown fox jumps over the lazy dog"]);
    const [b] = await createHashEmbedder().embed(["The quick brown fox jumps over the lazy dog"]);
    assert.equal(a.length, 384);
    assert.deepEqual(a, b);
    assert.ok(Math.abs(Math.hypot(...a) - 1) < 1e-9);
  });

  test("related texts are closer than unrelated ones; inflections still match", async () => {
    const [hiking, hikes, taxes] = await embedder.embed([
      "I love hiking in the mountains with my boots",
      "She hikes mountain trails wearing hiking boots",
      "Quarterly corporate tax filing deadlines for accountants",
    ]);
    assert.ok(cosineSimilarity(hiking, hikes) > cosineSimilarity(hiking, taxes) + 0.2);
  });

  test("empty text embeds to the zero vector, cosine 0 with anything", async () => {
    const [empty, other] = await embedder.embed(["", "anything"]);
    assert.ok(empty.every((x) => x === 0));
    assert.equal(cosineSimilarity(empty, other), 0);
  });
});

describe("weighted hash embedder (EMBEDDINGS_PROVIDER=hash)", () => {
  const embedder = createWeightedHashEmbedder();

  test("word forms meet through their stems, where the first hashing embedder barely saw them", async () => {
    const texts = ["She is researching adoption agencies", "what did she research about adopting"];
    const [a, b] = await embedder.embed(texts);
    const [c, d] = await createHashEmbedder().embed(texts);
    assert.ok(cosineSimilarity(a, b) > cosineSimilarity(c, d) + 0.1);
    assert.equal(embedder.model, "hash-idf-384");
    assert.equal(embedder.semantic, false);
  });

  test("a rare shared word outweighs a common one", async () => {
    const [rare, common, query] = await embedder.embed([
      "the sommelier poured the wine",
      "the man said that it was really good",
      "a sommelier really said",
    ]);
    assert.ok(cosineSimilarity(query, rare) > cosineSimilarity(query, common));
  });
});

describe("glove embedder (word vectors shipped in an npm package)", () => {
  test("knows synonyms the hashing embedders cannot see, and unrelated texts stay apart", async () => {
    const embedder = createGloveEmbedder();
    const [couch, sofa, puppy] = await embedder.embed([
      "When is the couch supposed to arrive?",
      "The new sofa gets delivered on Friday.",
      "We brought the puppy home from the breeder.",
    ]);
    assert.equal(embedder.dimensions, 100);
    assert.equal(embedder.semantic, true);
    assert.ok(cosineSimilarity(couch, sofa) > cosineSimilarity(couch, puppy) + 0.2);
    const [hashCouch, hashSofa] = await createWeightedHashEmbedder().embed([
      "When is the couch supposed to arrive?",
      "The new sofa gets delivered on Friday.",
    ]);
    assert.ok(cosineSimilarity(couch, sofa) > cosineSimilarity(hashCouch, hashSofa) + 0.2);
  });

  test("word closeness finds a long turn naming the question's thing in other words, where an average blurs it", async () => {
    const embedder = createGloveEmbedder();
    const question = "When did we go to the cinema?";
    const turns = [
      "Long day. The traffic on the ring road was awful, my boss kept changing the deadline, and in the evening we finally saw a movie.",
      "When did we go to the bank to open the account?",
      "We went to the park with the kids.",
    ];
    const closeness = embedder.wordCloseness?.(question, turns) ?? [];
    assert.ok(closeness[0] > closeness[1] && closeness[0] > closeness[2], String(closeness));
    assert.ok(closeness.every((c) => c >= 0 && c <= 1));
    // The case the list is for: the averaged vectors put the park before the film.
    const [asked, film, , park] = await embedder.embed([question, ...turns]);
    assert.ok(cosineSimilarity(asked, park) > cosineSimilarity(asked, film));
    // A question with no word the table knows is close to nothing, never NaN.
    assert.deepEqual(embedder.wordCloseness?.("zzqxv qqzzx", turns), [0, 0, 0]);
  });
});

describe("openai embedder against a loopback OpenAI-compatible server", () => {
  let server: FakeOpenAi;
  before(async () => {
    server = await startFakeOpenAi();
  });
  after(() => server.close());

  test("sends model, input, dimensions and the key; orders by index; normalises", async () => {
    server.script("/v1/embeddings", {
      body: {
        data: [
          { index: 1, embedding: [0, 2, 0] },
          { index: 0, embedding: [3, 0, 4] },
        ],
      },
    });
    const embedder = createOpenAiEmbedder({
      baseUrl: server.baseUrl,
      apiKey: "sk-test",
      model: "m1",
      dimensions: 3,
    });
    const vectors = await embedder.embed(["first", "second"]);
    assert.deepEqual(vectors, [
      [0.6, 0, 0.8],
      [0, 1, 0],
    ]);
    const request = server.requests.at(-1);
    assert.equal(request?.headers.authorization, "Bearer sk-test");
    assert.deepEqual(request?.body.input, ["first", "second"]);
    assert.equal(request?.body.model, "m1");
    assert.equal(request?.body.dimensions, 3);
  });

  test("retries 5xx and 429, then succeeds", async () => {
    server.script(
      "/v1/embeddings",
      { status: 503, body: { error: "busy" } },
      { status: 429, body: { error: "slow down" } },
      { body: { data: [{ index: 0, embedding: [1, 0] }] } },
    );
    const before = server.requests.length;
    const embedder = createOpenAiEmbedder({
      baseUrl: server.baseUrl,
      model: "m",
      dimensions: 2,
      backoffMs: 1,
    });
    assert.deepEqual(await embedder.embed(["x"]), [[1, 0]]);
    assert.equal(server.requests.length - before, 3);
  });

  test("a 400 is not retried; a wrong dimension is an error naming the model", async () => {
    server.script("/v1/embeddings", { status: 400, body: { error: "bad" } });
    const before = server.requests.length;
    const embedder = createOpenAiEmbedder({
      baseUrl: server.baseUrl,
      model: "m",
      dimensions: 2,
      backoffMs: 1,
    });
    await assert.rejects(embedder.embed(["x"]), /answered HTTP 400/);
    assert.equal(server.requests.length - before, 1);
    server.script("/v1/embeddings", { body: { data: [{ index: 0, embedding: [1, 0, 0] }] } });
    await assert.rejects(embedder.embed(["x"]), /2 numbers from model m/);
  });

  test("the cache answers a repeated text without calling upstream", async () => {
    const map = new Map<string, string>();
    const store = {
      get: async (k: string) => map.get(k) ?? null,
      set: async (k: string, v: string) => void map.set(k, v),
    };
    server.fallback("/v1/embeddings", (req) => ({
      body: {
        data: (req.body.input as string[]).map((_, index) => ({ index, embedding: [1, index] })),
      },
    }));
    const embedder = createCachedEmbedder(
      createOpenAiEmbedder({ baseUrl: server.baseUrl, model: "cached", dimensions: 2 }),
      { store },
    );
    const before = server.requests.length;
    const first = await embedder.embed(["a", "b"]);
    const second = await embedder.embed(["b", "a", "c"]);
    assert.deepEqual(second[0], first[1]);
    assert.deepEqual(second[1], first[0]);
    assert.equal(server.requests.length - before, 2);
    assert.deepEqual(server.requests.at(-1)?.body.input, ["c"]);
    assert.ok(map.has(embeddingCacheKey("cached", "a")));
    assert.notEqual(embeddingCacheKey("cached", "a"), embeddingCacheKey("other", "a"));
  });
});
