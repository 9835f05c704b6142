import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { chatAnswer, type FakeOpenAi, startFakeOpenAi } from "../testing/fake-openai.js";
import { createOpenAiLlm } from "./llm.js";

let server: FakeOpenAi;
before(async () => {
  server = await startFakeOpenAi();
});
after(() => server.close());

const format = {
  name: "answer",
  schema: { type: "object", properties: { ok: { type: "boolean" } } },
};

test("sends a strict json_schema response format and parses the content", async () => {
  server.script("/v1/chat/completions", chatAnswer({ ok: true }));
  const llm = createOpenAiLlm({ baseUrl: server.baseUrl, apiKey: "k", model: "gpt-test" });
  assert.deepEqual(await llm.completeJson([{ role: "user", content: "hi" }], format), { ok: true });
  const body = server.requests.at(-1)?.body as Record<string, unknown>;
  assert.equal(body.model, "gpt-test");
  assert.deepEqual(body.response_format, {
    type: "json_schema",
    json_schema: { ...format, strict: true },
  });
  assert.deepEqual(body.messages, [{ role: "user", content: "hi" }]);
});

test("retries a 500, and reports a non-JSON answer as an error", async () => {
  server.script("/v1/chat/completions", { status: 500, body: {} }, chatAnswer({ ok: false }));
  const llm = createOpenAiLlm({ baseUrl: server.baseUrl, model: "m", backoffMs: 1 });
  assert.deepEqual(await llm.completeJson([{ role: "user", content: "x" }], format), { ok: false });
  server.script("/v1/chat/completions", {
    body: { choices: [{ message: { role: "assistant", content: "not json" } }] },
  });
  await assert.rejects(llm.completeJson([{ role: "user", content: "x" }], format), /not JSON/);
});

test("times out a server that never answers in time", async () => {
  server.script("/v1/chat/completions", { ...chatAnswer({ ok: true }), delayMs: 2000 });
  const llm = createOpenAiLlm({ baseUrl: server.baseUrl, model: "m", timeoutMs: 50, retries: 0 });
  await assert.rejects(
    llm.completeJson([{ role: "user", content: "x" }], format),
    /failed: .*(timeout|abort)/i,
  );
});
