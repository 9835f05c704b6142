import { randomUUID } from "node:crypto";
import { setTimeout as delay } from "node:timers/promises";
import { inSpan, type Unsubscribe } from "@atrium/kit";
import type { ChatKernel, KernelOutput, PendingItem } from "../kernel/kernel-types.js";
import { answerOf, pendingOf, sourcesOf, tokensOf } from "../router/chat-response.js";
import type { TraceEmitter } from "../trace/trace-bus.js";
import type { TraceEventType } from "../trace/trace-event.js";
import type {
  ApprovalDecision,
  RunRecord,
  RunRequest,
  RunResponse,
  RunStore,
  YieldedQuery,
} from "./run-store.js";

/** What a second message does while a step of its workflow runs. */
export type BusyPolicy = "reject" | "enqueue" | "interrupt";
export const busyPolicies: readonly BusyPolicy[] = ["reject", "enqueue", "interrupt"];

/** A refused transition: busy workflow, stale or second resume, ended step (HTTP 409). */
export class RunConflictError extends Error {
  constructor(
    message: string,
    readonly run?: RunRecord,
  ) {
    super(message);
    this.name = "RunConflictError";
  }
}

export class RunNotFoundError extends Error {
  constructor(workflowId: string, stepId: string) {
    super(`no run for ${workflowId}/${stepId}`);
    this.name = "RunNotFoundError";
  }
}

/** The kernel raised: the step failed without an answer (POST /chat answers 500). */
export class RunKernelError extends Error {
  constructor(cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.name = "RunKernelError";
  }
}

/** Why a running step is being stopped; its trace ends with `cancelled: <reason>`. */
class RunCancelled extends Error {}

/** What the step answered, with the ids; `response` is what POST /chat returns. */
export interface RunResult {
  run: RunRecord;
  response: RunResponse;
}

export interface StartRun {
  workflowId: string;
  stepId: string;
  request: RunRequest;
  onBusy: BusyPolicy;
  /** Aborted when a synchronous caller gives up: the step is cancelled. */
  signal?: AbortSignal;
}

/** What a resume supplies for what the step waits for. */
export interface ResumeInput {
  /** The pause answered (GET's `pause`); a resume of an earlier pause is stale. Default: current. */
  pause?: number;
  approval?: "approve" | "deny";
  connection_id?: string;
  /** Merged into the step's context (what a `credentials` item names, e.g. `send_url`). */
  context?: Record<string, unknown>;
  /** Who gives the approval, recorded with it: the caller as the host authenticated it. */
  decidedBy?: string;
}

export interface RunManagerOptions {
  kernel: ChatKernel;
  store: RunStore;
  /** How long a host's claim on a running step holds without a heartbeat. Default 30 s. */
  leaseMs?: number;
  /** How often queued steps look whether their workflow became free. Default 200 ms. */
  pollMs?: number;
  onError?: (error: unknown, context: string) => void;
}

export interface RunManager {
  /** Identifies this host in run records (`host`). */
  readonly hostId: string;
  /**
   * Creates the run under the busy policy; `done` settles when the step ends or pauses (with
   * RunKernelError when the kernel raised). Throws RunConflictError for a busy workflow under
   * `reject`.
   */
  start(run: StartRun): Promise<{ run: RunRecord; done: Promise<RunResult> }>;
  resume(
    workflowId: string,
    stepId: string,
    input: ResumeInput,
    signal?: AbortSignal,
  ): Promise<{ run: RunRecord; done: Promise<RunResult> }>;
  /** Stops a step on whichever host runs it; resolves with its record once it stopped. */
  cancel(workflowId: string, stepId: string, reason?: string): Promise<RunRecord>;
  get(workflowId: string, stepId: string): Promise<RunRecord | undefined>;
  /** The steps waiting for something to be supplied, newest pause first. */
  yielded(query: YieldedQuery): Promise<RunRecord[]>;
  close(): Promise<void>;
}

/** Cancel requests go to every host; the one running the step stops it. */
export const cancelChannel = "chat_runs:cancel";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Events stop once the step has ended: a sub-agent still unwinding writes nothing after it. */
function gatedTrace(trace: TraceEmitter): TraceEmitter & { close(): void } {
  let open = true;
  return {
    workflowId: trace.workflowId,
    stepId: trace.stepId,
    emit: (type: TraceEventType, data: Record<string, unknown>) =>
      open ? trace.emit(type, data) : Promise.resolve(),
    close() {
      open = false;
    },
  };
}

function responseOf(output: KernelOutput): RunResponse {
  return {
    status: output.status,
    answer: answerOf(output),
    sources: sourcesOf(output),
    tokens: tokensOf(output),
    ...(output.status === "yield" ? { pending: pendingOf(output) } : {}),
  };
}

/**
 * A step as OpenTelemetry's GenAI conventions name it (`invoke_agent`, while tracing is on): the
 * agent, the workflow as the conversation, the step's token use and outcome; no message content.
 */
function invokeAgent(run: RunRecord, execute: () => Promise<KernelOutput>): Promise<KernelOutput> {
  const agent = run.request.agent_id;
  const attributes = {
    "gen_ai.operation.name": "invoke_agent",
    "gen_ai.agent.name": agent,
    "gen_ai.conversation.id": run.workflow_id,
  };
  return inSpan("atrium-agent", `invoke_agent ${agent}`, attributes, async (span) => {
    const output = await execute();
    const tokens = tokensOf(output);
    if (tokens.prompt_tokens !== undefined) {
      span?.setAttribute("gen_ai.usage.input_tokens", tokens.prompt_tokens);
    }
    if (tokens.completion_tokens !== undefined) {
      span?.setAttribute("gen_ai.usage.output_tokens", tokens.completion_tokens);
    }
    span?.setAttribute("atrium.step.status", output.status);
    return output;
  });
}

const waitingFor = (pending: PendingItem[] | undefined) =>
  (pending ?? []).map((p) => `${p.kind} (${p.detail})`).join(", ") || "input";

/**
 * Runs chat steps as durable runs: each step has a record in the run store, claimed by the host
 * that runs it under a lease it renews; a yielded step keeps the kernel's checkpoint so that any
 * host can resume it; a cancel reaches the running host over the cache's pub/sub (and, should
 * that message be lost, through the record its heartbeat reads).
 */
export function createRunManager(options: RunManagerOptions): RunManager {
  const { kernel, store } = options;
  const bus = kernel.traceBus;
  const leaseMs = options.leaseMs ?? 30_000;
  const heartbeatMs = Math.max(Math.floor(leaseMs / 3), 10);
  const pollMs = options.pollMs ?? 200;
  const onError = options.onError ?? (() => {});
  const hostId = `host_${randomUUID().slice(0, 8)}`;
  // Steps this host runs, by `workflow/step`.
  const local = new Map<string, AbortController>();
  const keyOf = (workflowId: string, stepId: string) => `${workflowId}/${stepId}`;
  let unsubscribe: Promise<Unsubscribe | undefined> | undefined;
  let closed = false;

  const stopLocal = (workflowId: string, stepId: string, reason: string) =>
    local.get(keyOf(workflowId, stepId))?.abort(new RunCancelled(reason));

  // Subscribed while this host runs steps: an idle host holds no subscription.
  function listen(): Promise<unknown> {
    if (!bus.cache) return Promise.resolve();
    unsubscribe ??= bus.cache
      .subscribe(cancelChannel, (message) => {
        try {
          const { workflow_id, step_id, reason } = JSON.parse(message) as Record<string, string>;
          stopLocal(workflow_id, step_id, reason);
        } catch (error) {
          onError(error, "cancel message");
        }
      })
      .catch((error) => {
        onError(error, "cancel subscription");
        unsubscribe = undefined;
        return undefined;
      });
    return unsubscribe;
  }
  async function stopListening(): Promise<void> {
    if (local.size > 0 || !unsubscribe) return;
    const stop = await unsubscribe;
    unsubscribe = undefined;
    await stop?.();
  }

  // A host that died mid-step leaves its lease to run out; any host then fails the step.
  async function expireLeases(): Promise<void> {
    for (const run of await store.expire()) {
      const trace = bus.forStep(run.workflow_id, run.step_id);
      await trace.emit("error", { message: run.reason ?? "the host running the step stopped" });
      await trace.emit("step_complete", {
        summary: `failed: ${run.reason ?? "the host running the step stopped"}`,
        status: "failure",
      });
    }
  }
  const expiry = setInterval(
    () => void expireLeases().catch((error) => onError(error, "lease expiry")),
    Math.max(Math.floor(leaseMs / 2), 10),
  );
  expiry.unref();
  void expireLeases().catch((error) => onError(error, "lease expiry"));

  async function endWithoutRun(run: RunRecord, summary: string): Promise<void> {
    const trace = bus.forStep(run.workflow_id, run.step_id);
    await trace.emit("step_complete", { summary, status: "failure" });
  }

  // The steps this host runs, until their end is recorded: a closing host waits for them.
  const inFlight = new Set<Promise<unknown>>();
  function execute(...args: Parameters<typeof runStep>): Promise<RunResult> {
    const running = runStep(...args);
    const settled = running.catch(() => undefined);
    inFlight.add(settled);
    void settled.then(() => inFlight.delete(settled));
    return running;
  }

  /** Runs the kernel for a claimed run and records how it ended or paused. */
  async function runStep(
    run: RunRecord,
    context: Record<string, unknown>,
    signal: AbortSignal | undefined,
    checkpoint: unknown,
  ): Promise<RunResult> {
    const { workflow_id: workflowId, step_id: stepId } = run;
    const key = keyOf(workflowId, stepId);
    const abort = new AbortController();
    local.set(key, abort);
    await listen();
    const onCallerGone = () => abort.abort(new RunCancelled("the client disconnected"));
    signal?.addEventListener("abort", onCallerGone, { once: true });
    if (signal?.aborted) onCallerGone();
    const ending = bus.forStep(workflowId, stepId);
    // The kernel's emitter closes before the step's last events, which go out through `ending`.
    const trace = gatedTrace(ending);
    let lost = false;
    const heartbeat = setInterval(() => {
      store.renew(workflowId, stepId, hostId, leaseMs).then(
        (held) => {
          if (!held) {
            lost = true;
            abort.abort(new RunCancelled("the host lost its claim on the step"));
          } else if (held.cancelRequested) {
            abort.abort(new RunCancelled("cancelled by request"));
          }
        },
        (error) => onError(error, "lease renewal"),
      );
    }, heartbeatMs);
    heartbeat.unref();
    const stopped = new Promise<never>((_, reject) => {
      const fail = () => reject(abort.signal.reason);
      if (abort.signal.aborted) fail();
      else abort.signal.addEventListener("abort", fail, { once: true });
    });
    stopped.catch(() => undefined);
    const finish = async (outcome: Parameters<RunStore["finish"]>[3]) => {
      if (lost) return;
      if (!(await store.finish(workflowId, stepId, hostId, outcome))) {
        onError(new Error(`run ${key} was no longer this host's when it ended`), "run finish");
      }
    };
    try {
      let output: KernelOutput;
      try {
        // A cancel ends the step at once, whether or not the sub-agent's work has unwound yet.
        output = await Promise.race([
          invokeAgent(run, () =>
            kernel.execute({
              task: run.request.message,
              systemPrompt: run.request.system_prompt,
              context: { ...context, workflow_id: workflowId, step_id: stepId },
              agentId: run.request.agent_id,
              trace,
              signal: abort.signal,
              ...(checkpoint === undefined ? {} : { resume: { checkpoint } }),
            }),
          ),
          stopped,
        ]);
      } catch (error) {
        if (abort.signal.aborted && abort.signal.reason instanceof RunCancelled) throw error;
        onError(error, "kernel");
        const message = error instanceof Error ? error.message : String(error);
        trace.close();
        await ending.emit("error", { message });
        await finish({ status: "failed", reason: message });
        // Streams following this step would otherwise wait for the inactivity timeout.
        await ending.emit("step_complete", { summary: "", status: "failure" });
        throw new RunKernelError(error);
      }
      if (abort.signal.aborted && abort.signal.reason instanceof RunCancelled) {
        throw abort.signal.reason;
      }
      const response = responseOf(output);
      if (output.status === "yield") {
        await trace.emit("thinking", {
          phase: "pause",
          thought: `paused, waiting for ${waitingFor(response.pending)}; resume with POST /chat/runs/${workflowId}/${stepId}/resume`,
        });
      }
      await finish({
        status:
          output.status === "yield"
            ? "yielded"
            : output.status === "success"
              ? "completed"
              : "failed",
        response,
        checkpoint: output.status === "yield" ? (output.metadata.checkpoint ?? null) : undefined,
        reason: output.status === "failure" ? response.answer.slice(0, 500) : undefined,
      });
      trace.close();
      await ending.emit("step_complete", { summary: response.answer, status: output.status });
      return { run: (await store.get(workflowId, stepId)) ?? run, response };
    } catch (error) {
      if (!(error instanceof RunCancelled)) throw error;
      const summary = `cancelled: ${error.message}`;
      const response: RunResponse = { status: "failure", answer: summary, sources: [], tokens: {} };
      trace.close();
      await finish({ status: "cancelled", response, reason: error.message });
      await ending.emit("step_complete", { summary, status: "failure" });
      return { run: (await store.get(workflowId, stepId)) ?? run, response };
    } finally {
      trace.close();
      clearInterval(heartbeat);
      signal?.removeEventListener("abort", onCallerGone);
      local.delete(key);
      wake();
      await stopListening().catch((error) => onError(error, "cancel subscription"));
    }
  }

  // Queued steps of this host wait here between polls; a local step's end wakes them early.
  let wakers: (() => void)[] = [];
  function wake(): void {
    const current = wakers;
    wakers = [];
    for (const w of current) w();
  }
  const nap = () =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(done, pollMs);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      wakers.push(done);
    });

  async function waitForTurn(run: RunRecord, signal?: AbortSignal): Promise<RunResult> {
    const { workflow_id: workflowId, step_id: stepId } = run;
    for (;;) {
      if (signal?.aborted) {
        const cancelled = await store.cancel(workflowId, stepId, "the client disconnected");
        if (cancelled?.changed)
          await endWithoutRun(cancelled.run, "cancelled: the client disconnected");
      }
      const claim = await store.claimQueued(workflowId, stepId, hostId, leaseMs);
      if ("claimed" in claim) return execute(claim.claimed, run.request.context, signal, undefined);
      if ("stale" in claim) {
        const now = claim.stale ?? run;
        return {
          run: now,
          response: now.response ?? {
            status: "failure",
            answer: `${now.status}: ${now.reason ?? "the step ended while queued"}`,
            sources: [],
            tokens: {},
          },
        };
      }
      await nap();
    }
  }

  async function cancel(workflowId: string, stepId: string, reason = "cancelled by request") {
    const result = await store.cancel(workflowId, stepId, reason);
    if (!result) throw new RunNotFoundError(workflowId, stepId);
    const { run, changed } = result;
    if (changed) {
      wake();
      await endWithoutRun(run, `cancelled: ${reason}`);
      return run;
    }
    if (run.status !== "running") {
      throw new RunConflictError(`step ${stepId} is already ${run.status}: nothing to cancel`, run);
    }
    if (local.has(keyOf(workflowId, stepId))) stopLocal(workflowId, stepId, reason);
    else if (bus.cache) {
      await bus.cache.publish(
        cancelChannel,
        JSON.stringify({ workflow_id: workflowId, step_id: stepId, reason }),
      );
    }
    // Without pub/sub the owner's next heartbeat reads the request. Answered once the owner has
    // recorded the end and its step_complete is in the history, so that the trace is complete.
    const deadline = Date.now() + leaseMs + 2 * heartbeatMs;
    for (;;) {
      const now = await store.get(workflowId, stepId);
      if (Date.now() > deadline) return now ?? run;
      if (now?.status !== "running" && (await traceEnded(workflowId, stepId))) return now ?? run;
      await sleep(20);
    }
  }

  const traceEnded = (workflowId: string, stepId: string) =>
    bus.history(workflowId, stepId).then(
      (events) => events.at(-1)?.type === "step_complete",
      () => false,
    );

  return {
    hostId,
    async start(start) {
      if (closed) throw new Error("the run manager is closed");
      const { workflowId, stepId, request, onBusy } = start;
      const created = await store.create({
        workflowId,
        stepId,
        request,
        status: onBusy === "reject" ? "running" : "queued",
        owner: hostId,
        leaseMs,
      });
      if ("busy" in created) {
        throw new RunConflictError(
          `workflow ${workflowId} is busy: step ${created.busy.step_id} is running; send on_busy "enqueue" or "interrupt", or cancel that step`,
          created.busy,
        );
      }
      const run = created.created;
      if (run.status === "running") {
        return { run, done: execute(run, request.context, start.signal, undefined) };
      }
      if (onBusy === "interrupt") {
        const running = await store.running(workflowId);
        if (running) {
          await cancel(workflowId, running.step_id, `interrupted by step ${stepId}`).catch(
            (error) => {
              if (!(error instanceof RunConflictError || error instanceof RunNotFoundError)) {
                throw error;
              }
            },
          );
        }
      }
      return { run, done: waitForTurn(run, start.signal) };
    },
    async resume(workflowId, stepId, input, signal) {
      if (closed) throw new Error("the run manager is closed");
      const run = await store.get(workflowId, stepId);
      if (!run) throw new RunNotFoundError(workflowId, stepId);
      const pause = input.pause ?? run.pauses;
      const decision: ApprovalDecision | undefined = input.approval && {
        pause,
        decision: input.approval,
        decided_by: input.decidedBy ?? "unauthenticated",
        decided_at: new Date().toISOString(),
      };
      const claim = await store.claimResume(workflowId, stepId, pause, hostId, leaseMs, decision);
      if ("busy" in claim) {
        throw new RunConflictError(
          `workflow ${workflowId} is busy: another step is running; resume once it ended`,
          run,
        );
      }
      if ("stale" in claim) {
        const now = claim.stale ?? run;
        throw new RunConflictError(
          now.status === "yielded"
            ? `pause ${pause} of step ${stepId} is stale: the step is at pause ${now.pauses}`
            : `step ${stepId} is ${now.status}, not yielded: it was resumed already or never paused`,
          now,
        );
      }
      const claimed = claim.claimed;
      const trace = bus.forStep(workflowId, stepId);
      const supplied = [
        decision
          ? `approval ${decision.decision === "approve" ? "granted" : "denied"} by ${decision.decided_by}`
          : "",
        input.connection_id ? `connection ${input.connection_id}` : "",
        input.context ? `context ${Object.keys(input.context).join(", ")}` : "",
      ].filter(Boolean);
      await trace.emit("thinking", {
        phase: "resume",
        thought: `resumed from pause ${pause} on ${hostId} with ${supplied.join("; ") || "nothing supplied"}`,
      });
      if (input.approval === "deny") {
        const answer = "denied: the person asked did not approve, so the step ends here";
        const response: RunResponse = { status: "failure", answer, sources: [], tokens: {} };
        await store.finish(workflowId, stepId, hostId, {
          status: "failed",
          response,
          reason: "approval denied",
        });
        await trace.emit("step_complete", { summary: answer, status: "failure" });
        const ended = (await store.get(workflowId, stepId)) ?? claimed;
        return { run: ended, done: Promise.resolve({ run: ended, response }) };
      }
      const context = {
        ...claimed.request.context,
        ...input.context,
        ...(input.approval === "approve" ? { approved: true } : {}),
        ...(input.connection_id ? { connection_id: input.connection_id } : {}),
      };
      return { run: claimed, done: execute(claimed, context, signal, run.checkpoint) };
    },
    cancel,
    get: (workflowId, stepId) => store.get(workflowId, stepId),
    yielded: (query) => store.listYielded(query),
    async close() {
      closed = true;
      clearInterval(expiry);
      for (const abort of local.values())
        abort.abort(new RunCancelled("the host is shutting down"));
      // Their ends are recorded before the store closes; one that hangs is left to its lease.
      if (inFlight.size > 0) {
        await Promise.race([Promise.all(inFlight), delay(5000, undefined, { ref: false })]);
      }
      const stop = await unsubscribe;
      await stop?.();
    },
  };
}
