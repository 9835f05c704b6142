import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Cache } from "@atrium/kit";
import Fastify, { type FastifyInstance } from "fastify";
import type { ChatKernel, KernelInput, KernelOutput } from "../kernel/kernel-types.js";
import { type ChatRouterOptions, createChatRouter } from "../router/chat-router.js";
import { createTraceBus, type TraceBus } from "../trace/trace-bus.js";

export interface TestChatApp {
  app: FastifyInstance;
  base: string;
  bus: TraceBus;
  dir: string;
  close(): Promise<void>;
}

export type ScriptedExecute = (input: KernelInput) => Promise<KernelOutput>;

/** A Fastify app with the chat router mounted under `/api/v1`, on loopback, for tests. */
export async function startTestChatApp(
  cache: Cache | undefined,
  execute: ScriptedExecute,
  routerOptions: ChatRouterOptions = {},
  mounts: string[] = ["/api/v1"],
): Promise<TestChatApp> {
  const dir = await mkdtemp(join(tmpdir(), "chat-traces-"));
  const bus = createTraceBus({ cache, tracesDir: dir });
  const kernel: ChatKernel = { traceBus: bus, execute };
  const app = Fastify();
  for (const prefix of mounts)
    await app.register(createChatRouter(kernel, routerOptions), { prefix });
  await app.listen({ port: 0, host: "127.0.0.1" });
  const address = app.server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    app,
    base: `http://127.0.0.1:${port}`,
    bus,
    dir,
    async close() {
      await app.close();
      await bus.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
