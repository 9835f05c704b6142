import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { type ChatKernel, createChatRouter, createTraceBus, type TraceBus } from "@atrium/chat";
import { createMemoryCache } from "@atrium/kit";
import { createChatClient, type TraceEvent } from "@atrium/sdk";
import Fastify, { type FastifyInstance } from "fastify";
import { startTcpProxy, type TcpProxy } from "./gateway-tcp-proxy.js";

/**
 * The SDK's trace iterator against the real chat router (subscribe-first stream, sequence ids):
 * the connection is cut mid-step and the iterator resumes with Last-Event-ID, so every event
 * arrives exactly once and in order.
 */
let app: FastifyInstance;
let bus: TraceBus;
let proxy: TcpProxy;
let tracesDir: string;
let release = () => {};
const halfway = new Promise<void>((resolve) => {
  release = resolve;
});

before(async () => {
  tracesDir = await mkdtemp(join(tmpdir(), "sdk-traces-"));
  bus = createTraceBus({ cache: createMemoryCache(), tracesDir });
  const kernel: ChatKernel = {
    traceBus: bus,
    async execute(input) {
      for (let i = 1; i <= 3; i++) await input.trace.emit("thinking", { thought: `before ${i}` });
      await halfway;
      for (let i = 1; i <= 3; i++) await input.trace.emit("thinking", { thought: `after ${i}` });
      return { status: "success", summary: "done", metadata: {} };
    },
  };
  app = Fastify();
  await app.register(createChatRouter(kernel), { prefix: "/api/v1" });
  await app.listen({ host: "127.0.0.1", port: 0 });
  const { port } = app.server.address() as { port: number };
  proxy = await startTcpProxy(new URL(`http://127.0.0.1:${port}`));
});

after(async () => {
  await proxy?.close();
  await app?.close();
  await bus?.close();
  await rm(tracesDir, { recursive: true, force: true });
});

test("a cut trace stream resumes with Last-Event-ID: every event once, in order", async () => {
  const { port } = app.server.address() as { port: number };
  const direct = createChatClient({ baseUrl: `http://127.0.0.1:${port}/api/v1` });
  const viaProxy = createChatClient({ baseUrl: `${proxy.url}/api/v1` });
  const workflowId = "chat_5df1a2b3c4d5";

  const seen: TraceEvent[] = [];
  const following = (async () => {
    for await (const event of viaProxy.stream(workflowId, { reconnectDelayMs: 20 })) {
      seen.push(event);
      if (seen.length === 2) {
        proxy.cut();
        release();
      }
    }
  })();
  const answer = await direct.send({ message: "think", workflow_id: workflowId });
  await following;

  assert.equal(answer.status, "success");
  assert.equal(proxy.accepted(), 2, "the iterator reconnected once");
  assert.deepEqual(
    seen.map((e) => e.seq),
    seen.map((_, i) => i + 1),
  );
  assert.deepEqual(
    seen.map((e) => e.type),
    [...Array(6).fill("thinking"), "step_complete"],
  );
  const history = await direct.history(workflowId, answer.step_id);
  assert.equal(history.length, seen.length);
});
