import { AtriumHttpError, type ChatClient, type ChatResponse, type ChatRun } from "@atrium/sdk";

/**
 * A chat client over runs held in memory, as the chat host's run store keeps them: a test moves
 * a run along (`settle`, `yieldFor`) and reads what the MCP server asked of it (`calls`).
 */
export interface FakeChat {
  client: ChatClient;
  runs: Map<string, ChatRun>;
  calls: { method: string; args: unknown[] }[];
  /** What the next synchronous send (or resume) answers. */
  nextAnswer: Partial<ChatResponse>;
  settle(workflowId: string, status: ChatRun["status"], response?: ChatRun["response"]): void;
  yieldFor(workflowId: string, pending: readonly Record<string, unknown>[]): void;
}

const key = (workflowId: string, stepId: string) => `${workflowId}/${stepId}`;

export function createFakeChat(): FakeChat {
  const runs = new Map<string, ChatRun>();
  const calls: FakeChat["calls"] = [];
  let clock = Date.parse("2026-11-27T00:00:00Z");
  const now = () => {
    clock += 1000;
    return new Date(clock).toISOString();
  };
  const find = (workflowId: string, stepId: string) => {
    const run = runs.get(key(workflowId, stepId));
    if (run === undefined) throw new AtriumHttpError(404, { detail: "no such run" });
    return run;
  };
  const update = (run: ChatRun, change: Partial<ChatRun>) =>
    Object.assign(run, change, { updated_at: now() });
  const answer = (workflowId: string, stepId: string): ChatResponse => ({
    workflow_id: workflowId,
    step_id: stepId,
    status: "success",
    answer: "done",
    sources: [],
    tokens: {},
    elapsed_ms: 1,
    ...fake.nextAnswer,
  });
  const fake: FakeChat = {
    runs,
    calls,
    nextAnswer: {},
    settle(workflowId, status, response) {
      const run = [...runs.values()].find((r) => r.workflow_id === workflowId);
      if (run) update(run, { status, response });
    },
    yieldFor(workflowId, pending) {
      const run = [...runs.values()].find((r) => r.workflow_id === workflowId);
      if (run === undefined) return;
      const items = pending as ChatRun["pending"];
      update(run, {
        status: "yielded",
        pause: run.pause + 1,
        pending: items,
        response: { status: "yield", answer: "waiting", sources: [], tokens: {}, pending: items },
      });
    },
    client: {
      async send(request) {
        calls.push({ method: "send", args: [request] });
        return answer(request.workflow_id ?? "chat_1", "step_1");
      },
      stream: async function* () {},
      history: async () => [],
      async start(request) {
        calls.push({ method: "start", args: [request] });
        const workflowId = request.workflow_id ?? "chat_1";
        const created = now();
        const run: ChatRun = {
          workflow_id: workflowId,
          step_id: "step_1",
          status: "queued",
          pause: 0,
          host: null,
          cancel_requested: false,
          created_at: created,
          updated_at: created,
        };
        runs.set(key(workflowId, "step_1"), run);
        return { workflow_id: workflowId, step_id: "step_1", status: "queued" };
      },
      async run(workflowId, stepId) {
        return structuredClone(find(workflowId, stepId));
      },
      async resume(workflowId, stepId, resume) {
        calls.push({ method: "resume", args: [workflowId, stepId, resume] });
        const run = find(workflowId, stepId);
        if (resume.pause !== undefined && resume.pause !== run.pause) {
          throw new AtriumHttpError(409, { detail: "stale pause" }, "stale pause");
        }
        const response = answer(workflowId, stepId);
        update(run, { status: "completed", response });
        return response;
      },
      async resumeInBackground(workflowId, stepId, resume) {
        calls.push({ method: "resumeInBackground", args: [workflowId, stepId, resume] });
        const run = find(workflowId, stepId);
        if (resume.pause !== undefined && resume.pause !== run.pause) {
          throw new AtriumHttpError(409, { detail: "stale pause" }, "stale pause");
        }
        update(run, { status: "running", pending: undefined });
        return { workflow_id: workflowId, step_id: stepId, status: "running" };
      },
      async cancel(workflowId, stepId) {
        calls.push({ method: "cancel", args: [workflowId, stepId] });
        const run = find(workflowId, stepId);
        return update(run, { status: "cancelled", reason: "cancelled by request" });
      },
    },
  };
  return fake;
}
