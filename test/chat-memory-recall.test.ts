import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { startAgentService } from "@atrium/chat";
import { createLogger } from "@atrium/kit";
import { eventually } from "@atrium/kit/testing";
import { startMemoryService } from "@atrium/memory";

// The chat kernel's researcher on `make start` defaults (no LLM, GloVe embeddings, PGlite): it
// answers from memory only with what is relevant, and says so when nothing is.
test("the researcher answers from a relevant memory and says it found nothing for an unrelated question", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "chat-recall-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const memory = await startMemoryService({
    env: {
      MEMORY_HOST: "127.0.0.1",
      MEMORY_REST_PORT: "0",
      MEMORY_GRPC_PORT: "0",
      ATRIUM_DATA_DIR: join(dir, "memory"),
      MEMORY_PROMOTER_INTERVAL: "0s",
    },
    logger: createLogger({ name: "memory", level: "silent" }),
  });
  t.after(() => memory.stop());
  const agent = await startAgentService({
    env: {
      AGENT_HOST: "127.0.0.1",
      AGENT_PORT: "0",
      TRACES_DIR: join(dir, "traces"),
      MEMORY_GRPC_URL: memory.urls.grpc!,
    },
    logger: createLogger({ name: "agent", level: "silent" }),
  });
  t.after(() => agent.stop());
  const context = { tenant_id: "acme", user_id: "ada" };
  const chat = async (message: string, role?: string) => {
    const response = await fetch(`${agent.urls.rest}/api/v1/chat`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ message, context: { ...context, role } }),
    });
    assert.equal(response.status, 200);
    return (await response.json()) as { status: string; answer: string };
  };

  const ran = await chat("Run this: ```js\nconsole.log([3,1,2].sort())\n```");
  assert.equal(ran.status, "success");
  assert.match(ran.answer, /\[1,2,3\]/);
  // The finished turn is stored; wait until memory finds it by its words.
  const base = `${memory.urls.rest}/api/v1`;
  const session = (await (
    await fetch(`${base}/sessions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ tenant_id: "acme", user_id: "ada" }),
    })
  ).json()) as { session_id: string };
  await eventually("the turn is in memory", async () => {
    const found = (await (
      await fetch(`${base}/sessions/${session.session_id}/context/search`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query: "console.log sort" }),
      })
    ).json()) as { results: unknown[] };
    return found.results.length > 0;
  });

  const unrelated = await chat("Who wrote Pride and Prejudice?");
  assert.notEqual(unrelated.status, "success");
  assert.match(unrelated.answer, /nothing relevant/);
  assert.doesNotMatch(unrelated.answer, /console\.log/);

  const related = await chat("What did I ask you to run with console.log and sort?", "researcher");
  assert.equal(related.status, "success");
  assert.match(related.answer, /console\.log\(\[3,1,2\]\.sort\(\)\)/);
});
