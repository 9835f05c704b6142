import assert from "node:assert/strict";
import { type IncomingMessage, request } from "node:http";
import { type AddressInfo, createServer } from "node:net";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { type Cache, createMemoryCache, createRedisCache } from "@atrium/kit";
import { killRedisConnection, needsServer, redisUrl } from "@atrium/kit/testing";
import { EventSource } from "eventsource";
import { startTestChatApp } from "../testing/chat-app.js";
import { readSse } from "../testing/sse-client.js";
import type { TraceEvent } from "../trace/trace-event.js";
import { interruptedMessage } from "./trace-stream.js";

const total = 3000;

function followWithEventSource(url: string): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const seqs: number[] = [];
    const es = new EventSource(url);
    es.onmessage = (message) => {
      const event = JSON.parse(message.data) as TraceEvent;
      seqs.push(event.seq!);
      if (event.type === "step_complete") {
        es.close();
        resolve(seqs);
      }
    };
    es.onerror = (error) => {
      es.close();
      reject(error);
    };
  });
}

/**
 * Publishes a few thousand events while clients connect at random moments; every client must
 * receive every event exactly once, in order.
 */
export async function proveNoLossNoDuplicates(cache: Cache, workflowId: string): Promise<void> {
  const chat = await startTestChatApp(cache, async () => ({ status: "success", metadata: {} }));
  try {
    const url = `${chat.base}/api/v1/chat/stream/${workflowId}`;
    const clients: Promise<number[]>[] = [];
    const connectAt = new Set(Array.from({ length: 40 }, () => Math.floor(Math.random() * total)));
    connectAt.add(0);
    let n = 0;
    for (let i = 0; i < total; i++) {
      if (connectAt.has(i)) {
        clients.push(
          n++ % 4 === 0
            ? followWithEventSource(url)
            : readSse(url).then((r) => r.events.map((e) => e.seq!)),
        );
      }
      const type = i === total - 1 ? "step_complete" : "thinking";
      const published = chat.bus.publish({
        workflow_id: workflowId,
        step_id: "step_1",
        type,
        data: { thought: `t${i}`, summary: type === "step_complete" ? "done" : undefined },
      });
      // Mostly fire-and-forget so publishing races the clients' subscribe and replay.
      if (i % 25 === 0) {
        await published;
        await sleep(Math.random() * 3);
      }
    }
    clients.push(readSse(url).then((r) => r.events.map((e) => e.seq!)));
    const expected = Array.from({ length: total }, (_, i) => i + 1);
    const results = await Promise.all(clients);
    for (const [i, seqs] of results.entries()) {
      assert.equal(seqs.length, total, `client ${i} got ${seqs.length} events`);
      assert.deepEqual(seqs, expected, `client ${i} got every event once, in order`);
    }
    while (cache.subscriberCount() > 0) await sleep(10);
  } finally {
    await chat.close();
  }
}

test("clients joining at random moments get every event exactly once (in-process)", async () => {
  await proveNoLossNoDuplicates(createMemoryCache(), `wf_race_${process.pid}`);
});

test("clients joining at random moments get every event exactly once (Redis)", async (t) => {
  if (!(await needsServer(t, "redis"))) return;
  const cache = createRedisCache({ url: redisUrl() });
  const workflowId = `wf_race_${process.pid}_${Date.now()}`;
  t.after(async () => {
    await cache.del(`trace_log:${workflowId}`, `trace_seq:${workflowId}`);
    await cache.close();
  });
  await proveNoLossNoDuplicates(cache, workflowId);
});

test("with Redis unreachable a stream sends its error event instead of hanging", async (t) => {
  const port = await deadPort();
  const warnings: string[] = [];
  const cache = createRedisCache({
    url: `redis://127.0.0.1:${port}`,
    onStateChange: ({ state }) => warnings.push(state),
  });
  const chat = await startTestChatApp(cache, async () => ({ status: "success", metadata: {} }));
  t.after(async () => {
    await chat.close();
    await cache.close();
  });
  const result = await readSse(`${chat.base}/api/v1/chat/stream/wf_no_redis`);
  assert.deepEqual(
    result.events.map((e) => [e.type, e.data.message]),
    [["error", "trace stream failed"]],
  );
  assert.deepEqual(warnings, ["down"], "one warning, however often it retries");
});

async function deadPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

test("a stream whose Redis feed drops mid-step ends with an error event telling the client to reconnect", async (t) => {
  if (!(await needsServer(t, "redis"))) return;
  const connectionName = `trace-drop-${process.pid}-${Date.now()}`;
  const cache = createRedisCache({ url: redisUrl(), connectionName, onStateChange: () => {} });
  const chat = await startTestChatApp(cache, async () => ({ status: "success", metadata: {} }));
  const workflowId = `wf_drop_${process.pid}_${Date.now()}`;
  t.after(async () => {
    await cache.del(`trace_log:${workflowId}`, `trace_seq:${workflowId}`);
    await chat.close();
    await cache.close();
  });
  await chat.bus.publish({
    workflow_id: workflowId,
    step_id: "step_1",
    type: "thinking",
    data: { thought: "first" },
  });
  const stream = readSse(`${chat.base}/api/v1/chat/stream/${workflowId}`);
  while (cache.subscriberCount() === 0) await sleep(10);
  await killRedisConnection(`${connectionName}:subscriber`);

  const result = await stream;
  assert.deepEqual(
    result.events.map((e) => [e.type, e.data.message ?? e.data.thought]),
    [
      ["thinking", "first"],
      ["error", interruptedMessage],
    ],
  );
});

test("clients that stop reading get every event once, in order, when they read again", async (t) => {
  const chat = await startTestChatApp(createMemoryCache(), async () => ({
    status: "success",
    metadata: {},
  }));
  t.after(() => chat.close());
  const workflowId = "wf_slow_readers";
  // 24 MB in all, well past what the kernel buffers on loopback: the server has to hold events
  // back, for the first client while live, for the second during its replay too.
  const padding = "x".repeat(64 * 1024);
  const count = 384;
  const publish = (i: number) =>
    chat.bus.publish({
      workflow_id: workflowId,
      step_id: "step_1",
      type: i === count ? "step_complete" : "thinking",
      data: { i, padding },
    });
  const connectPaused = async () => {
    const subscribers = chat.bus.cache?.subscriberCount() ?? 0;
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = request(`${chat.base}/api/v1/chat/stream/${workflowId}`, resolve);
      req.on("error", reject);
      req.end();
    });
    response.pause();
    while (chat.bus.cache?.subscriberCount() === subscribers) await sleep(10);
    return response;
  };
  const readAll = async (response: IncomingMessage) => {
    response.setEncoding("utf8");
    let text = "";
    for await (const chunk of response) text += chunk;
    return text
      .split("\n")
      .filter((line) => line.startsWith("data: "))
      .map((line) => (JSON.parse(line.slice(6)) as TraceEvent).seq);
  };
  const live = await connectPaused();
  for (let i = 1; i <= count / 2; i++) await publish(i);
  const replaying = await connectPaused();
  for (let i = count / 2 + 1; i <= count; i++) await publish(i);
  const expected = Array.from({ length: count }, (_, i) => i + 1);
  assert.deepEqual(await readAll(live), expected);
  assert.deepEqual(await readAll(replaying), expected);
});
