import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMemoryCache } from "@atrium/kit";
import { createKernel, type KernelOptions } from "../kernel/kernel.js";
import type { ChatKernel, KernelInput, KernelOutput } from "../kernel/kernel-types.js";
import { createTraceBus, type TraceBus } from "../trace/trace-bus.js";
import type { TraceEvent } from "../trace/trace-event.js";

export interface KernelHarness {
  kernel: ChatKernel;
  bus: TraceBus;
  /** Runs one message and returns the output with the events of its step. */
  run(
    task: string,
    input?: Partial<Omit<KernelInput, "trace">>,
  ): Promise<{ output: KernelOutput; events: TraceEvent[] }>;
  close(): Promise<void>;
}

let steps = 0;

export async function createKernelHarness(
  options: Omit<KernelOptions, "traceBus">,
): Promise<KernelHarness> {
  const dir = await mkdtemp(join(tmpdir(), "kernel-traces-"));
  const bus = createTraceBus({ cache: createMemoryCache(), tracesDir: dir });
  const kernel = createKernel({ ...options, traceBus: bus });
  return {
    kernel,
    bus,
    async run(task, input = {}) {
      const stepId = `step_${++steps}`;
      const output = await kernel.execute({
        task,
        systemPrompt: input.systemPrompt ?? "",
        context: input.context ?? {},
        agentId: input.agentId ?? "chat",
        trace: bus.forStep("wf_kernel", stepId),
        signal: input.signal,
      });
      return { output, events: await bus.history("wf_kernel", stepId) };
    },
    async close() {
      await bus.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
