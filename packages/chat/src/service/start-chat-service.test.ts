import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import { createLogger, createRedisCache } from "@atrium/kit";
import { needsServer, redisUrl } from "@atrium/kit/testing";
import { EventSource } from "eventsource";
import { startFakeMemory } from "../testing/memory-server.js";
import { startScriptedLlm } from "../testing/scripted-llm.js";
import type { TraceEvent } from "../trace/trace-event.js";
import { startAgentService } from "./start-chat-service.js";

async function chatThroughHost(t: TestContext, extraEnv: Record<string, string>): Promise<string> {
  const llm = await startScriptedLlm((req) =>
    req.response_format
      ? { content: '{"role":"coder","reason":"arithmetic"}' }
      : { content: "```js\nconsole.log(2 ** 10)\n```" },
  );
  t.after(() => llm.close());
  const dir = await mkdtemp(join(tmpdir(), "agent-host-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const service = await startAgentService({
    env: {
      AGENT_PORT: "0",
      AGENT_HOST: "127.0.0.1",
      TRACES_DIR: dir,
      LLM_BASE_URL: llm.baseUrl,
      ...extraEnv,
    },
    logger: createLogger({ name: "agent", level: "silent" }),
  });
  t.after(() => service.stop());
  const base = `${service.urls.rest}/api/v1`;
  assert.equal((await fetch(`${service.urls.rest}/health`)).status, 200);

  const workflowId = `chat_host_${process.pid}_${Date.now()}`;
  const es = new EventSource(`${base}/chat/stream/${workflowId}`);
  t.after(() => es.close());
  const events: TraceEvent[] = [];
  const complete = new Promise<void>((resolve) => {
    es.onmessage = (message) => {
      const event = JSON.parse(message.data) as TraceEvent;
      events.push(event);
      if (event.type === "step_complete") {
        es.close();
        resolve();
      }
    };
  });
  await new Promise<void>((resolve) => {
    es.onopen = () => resolve();
  });
  // The stream is open once its subscription is acknowledged, which the gauge reports.
  let metrics = "";
  while (!/atrium_chat_stream_subscriptions({[^}]*})? 1\b/.test(metrics)) {
    metrics = await (await fetch(`${service.urls.rest}/metrics`)).text();
    assert.match(metrics, /atrium_chat_stream_subscriptions({[^}]*})? [01]\b/);
  }

  const res = await fetch(`${base}/chat`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ message: "what is 2 to the 10th?", workflow_id: workflowId }),
  });
  assert.equal(res.status, 200);
  const body = (await res.json()) as {
    answer: string;
    status: string;
    step_id: string;
    tokens: Record<string, number>;
  };
  assert.equal(body.status, "success");
  assert.equal(body.answer, "1024");
  assert.ok(body.tokens.total_tokens > 0);
  await complete;
  const kinds = new Set(events.map((e) => e.type));
  for (const type of [
    "thinking",
    "llm_request",
    "llm_response",
    "tool_start",
    "tool_result",
    "step_complete",
  ]) {
    assert.ok(kinds.has(type as TraceEvent["type"]), `the stream carried ${type}`);
  }
  assert.deepEqual(
    events.map((e) => e.seq),
    events.map((_, i) => i + 1),
  );
  const history = (await (
    await fetch(`${base}/chat/history/${workflowId}/${body.step_id}`)
  ).json()) as {
    events: TraceEvent[];
  };
  assert.deepEqual(history.events, events);
  return workflowId;
}

test("the agent host serves the chat router under /api/v1 (in-process cache)", async (t) => {
  await chatThroughHost(t, {});
});

test("the agent host serves the chat router under /api/v1 (Redis)", async (t) => {
  if (!(await needsServer(t, "redis"))) return;
  const workflowId = await chatThroughHost(t, { REDIS_URL: redisUrl() });
  const redis = createRedisCache({ url: redisUrl() });
  await redis.del(`trace_log:${workflowId}`, `trace_seq:${workflowId}`);
  await redis.close();
});

test("a bad variable stops the host with one line naming it", async () => {
  await assert.rejects(
    startAgentService({
      env: { AGENT_PORT: "eighty" },
      logger: createLogger({ name: "agent", level: "silent" }),
    }),
    /AGENT_PORT must be a port number/,
  );
});

test("/health reports the memory service through its gRPC client", async (t) => {
  const memory = await startFakeMemory([]);
  t.after(() => memory.close());
  const logger = createLogger({ name: "agent", level: "silent" });
  for (const [url, expected] of [
    [memory.url, "ok"],
    ["http://127.0.0.1:1", "failing"],
  ]) {
    const service = await startAgentService({
      env: { AGENT_PORT: "0", AGENT_HOST: "127.0.0.1", TRACES_DIR: tmpdir(), MEMORY_GRPC_URL: url },
      logger,
    });
    const health = (await (await fetch(`${service.urls.rest}/health`)).json()) as {
      checks: Record<string, string>;
    };
    await service.stop();
    assert.equal(health.checks.memory, expected);
  }
});

test("beyond loopback the host needs caller authentication or an explicit opt-out", async (t) => {
  const logger = createLogger({ name: "agent", level: "silent" });
  const dir = await mkdtemp(join(tmpdir(), "agent-open-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  for (const host of ["0.0.0.0", "::", "example.internal"]) {
    await assert.rejects(
      startAgentService({ env: { AGENT_PORT: "0", AGENT_HOST: host, TRACES_DIR: dir }, logger }),
      new RegExp(
        `AGENT_HOST=${host} listens beyond loopback .*ATRIUM_AGENT_API_KEY or ATRIUM_AGENT_JWT_SECRET.*AGENT_ALLOW_UNAUTHENTICATED=true`,
      ),
    );
  }
  for (const env of [
    { AGENT_HOST: "127.0.0.1" },
    { AGENT_HOST: "localhost" },
    { AGENT_HOST: "0.0.0.0", ATRIUM_AGENT_API_KEY: "agent-key-for-the-test" },
    { AGENT_HOST: "0.0.0.0", ATRIUM_AGENT_JWT_SECRET: "a-jwt-secret-for-the-test-32-bytes" },
    { AGENT_HOST: "0.0.0.0", AGENT_ALLOW_UNAUTHENTICATED: "true" },
  ]) {
    const service = await startAgentService({
      env: { AGENT_PORT: "0", TRACES_DIR: dir, ...env },
      logger,
    });
    const health = await fetch(`${service.urls.rest}/health`);
    await service.stop();
    assert.equal(health.status, 200, JSON.stringify(env));
  }
});
