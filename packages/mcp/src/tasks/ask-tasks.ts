import { randomBytes } from "node:crypto";
import { AtriumHttpError, type ChatResumeRequest, type ChatRun } from "@atrium/sdk";
import { ErrorCode, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { consentElicitations, consentItemsOf } from "../consent.js";
import type { ToolContext } from "../tool-context.js";
import { askInput, askResult, ownsWorkflow, workflowPrefix } from "../tools/ask.js";
import { metaKeys, StatelessErrorCode } from "../transport/stateless-lifecycle.js";

// The Tasks extension of MCP 2026-07-28 (SEP-2663): the server decides that a tools/call becomes
// a task, answers at once with the task (`resultType: "task"`), and the client polls tasks/get,
// whose answer inlines the tool's result when it is done; tasks/update delivers what a task in
// `input_required` asked for, tasks/cancel stops it. A task of Atrium is a background chat run
// of `ask`: its id is the run's workflow and step, so any gateway instance answers for it from
// the chat run store, and its state is the run's. The SDK (1.x) implements the earlier shape of
// tasks (2025-11-25: a `task` param, tasks/result, tasks/list), which this revision removed.

export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

/** How often a client is told to poll; a step takes seconds to minutes. */
const pollIntervalMs = 1000;

type TaskStatus = "working" | "input_required" | "completed" | "failed" | "cancelled";

interface RequestLike {
  id?: string | number;
  method?: string;
  params?: {
    name?: unknown;
    arguments?: unknown;
    taskId?: unknown;
    inputResponses?: unknown;
    _meta?: Record<string, unknown>;
  };
}

/** Whether the request declares the extension (2026-07-28 declares capabilities per request). */
function declaresTasks(request: RequestLike): boolean {
  const capabilities = request.params?._meta?.[metaKeys.clientCapabilities] as
    | { extensions?: Record<string, unknown> }
    | undefined;
  return capabilities?.extensions?.[TASKS_EXTENSION] !== undefined;
}

const askArguments = z.object(askInput);

/** The task id of a step: its workflow and step ids, which is all tasks/get needs to find it. */
export const taskIdOf = (workflowId: string, stepId: string) => `${workflowId}.${stepId}`;

/** The step of a task id of this scope; undefined for a malformed one or another scope's. */
export function stepOfTaskId(
  context: Pick<ToolContext, "scope">,
  taskId: unknown,
): { workflowId: string; stepId: string } | undefined {
  if (typeof taskId !== "string") return undefined;
  const dot = taskId.indexOf(".");
  if (dot <= 0 || dot === taskId.length - 1) return undefined;
  const workflowId = taskId.slice(0, dot);
  if (!ownsWorkflow(context as ToolContext, workflowId)) return undefined;
  return { workflowId, stepId: taskId.slice(dot + 1) };
}

/** What a yielded run waits for; consent items are chat's newer kind, beside the SDK's two. */
const pendingOf = (run: ChatRun): readonly { kind: string; detail: string }[] =>
  run.pending ?? run.response?.pending ?? [];

/** What a task of an `input_required` step asks, keyed by pending item: one elicitation each. */
function inputRequestsOf(run: ChatRun): Record<string, unknown> {
  const requests: Record<string, unknown> = {};
  const pending = pendingOf(run);
  pending.forEach((item, i) => {
    const key = `pause${run.pause}_${i}`;
    if (item.kind === "approval") {
      requests[key] = {
        method: "elicitation/create",
        params: {
          mode: "form",
          message: item.detail,
          requestedSchema: {
            type: "object",
            properties: { decision: { type: "string", enum: ["approve", "deny"] } },
            required: ["decision"],
          },
        },
      };
    } else if (item.kind === "credentials") {
      requests[key] = {
        method: "elicitation/create",
        params: {
          mode: "form",
          message: item.detail,
          requestedSchema: {
            type: "object",
            properties: {
              connection_id: { type: "string", description: "The Atrium connection to use" },
            },
            required: ["connection_id"],
          },
        },
      };
    }
  });
  const consent = consentItemsOf(pending);
  consentElicitations(consent, `${run.workflow_id}/${run.step_id}`).forEach((params, i) => {
    requests[`pause${run.pause}_consent_${i}`] = { method: "elicitation/create", params };
  });
  return requests;
}

const taskStatusOf: Record<ChatRun["status"], TaskStatus> = {
  queued: "working",
  running: "working",
  yielded: "input_required",
  completed: "completed",
  failed: "failed",
  cancelled: "cancelled",
};

/** The task envelope of a run (what tools/call answers and tasks/get starts with). */
function taskOf(run: ChatRun): Record<string, unknown> {
  return {
    taskId: taskIdOf(run.workflow_id, run.step_id),
    status: taskStatusOf[run.status],
    ...(run.reason ? { statusMessage: run.reason } : {}),
    createdAt: run.created_at,
    lastUpdatedAt: run.updated_at,
    // Runs are kept by the chat store, not expired by this server.
    ttlMs: null,
    pollIntervalMs,
  };
}

/**
 * tasks/get's DetailedTask: a finished step inlines ask's result (a step that answered with a
 * failure ran, so it is completed with the failure in the result); a run that broke (its host
 * died, say) is failed with a JSON-RPC error; a yielded one lists what it asks for.
 */
function detailedTaskOf(run: ChatRun): Record<string, unknown> {
  const task = taskOf(run);
  if (run.status === "completed" && run.response) {
    const result = askResult(run.response, run.workflow_id, run.step_id, undefined);
    return { ...task, result };
  }
  if (run.status === "failed") {
    return {
      ...task,
      error: { code: ErrorCode.InternalError, message: run.reason ?? "The step failed." },
    };
  }
  if (run.status === "yielded") return { ...task, inputRequests: inputRequestsOf(run) };
  return task;
}

/** A resume of a yielded step from the client's answers to its input requests. */
function resumeOf(run: ChatRun, responses: Record<string, unknown>): ChatResumeRequest | string {
  const resume: ChatResumeRequest = { pause: run.pause };
  const pending = pendingOf(run);
  const unanswered: string[] = [];
  pending.forEach((item, i) => {
    if (item.kind === "consent") return;
    const key = `pause${run.pause}_${i}`;
    const response = responses[key] as
      | { action?: string; content?: Record<string, unknown> }
      | undefined;
    if (response === undefined) {
      unanswered.push(key);
    } else if (item.kind === "approval") {
      resume.approval =
        response.action === "accept" && response.content?.decision === "approve"
          ? "approve"
          : "deny";
    } else if (typeof response.content?.connection_id === "string") {
      resume.connection_id = response.content.connection_id;
    } else {
      unanswered.push(key);
    }
  });
  if (unanswered.length > 0) {
    return `inputResponses must answer ${unanswered.join(", ")} (a step resumes with all its answers at once)`;
  }
  return resume;
}

class TaskRefusal extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

const unknownTask = (taskId: unknown) =>
  new TaskRefusal(ErrorCode.InvalidParams, `Invalid params: unknown task ${String(taskId)}`, {
    taskId,
  });

export interface AskTasks {
  /** Whether this 2026-07-28 request is the extension's to answer rather than the SDK server's. */
  handles(request: JSONRPCMessage): boolean;
  /** Its JSON-RPC response (statelessAnswer gives it its HTTP status). */
  answer(request: JSONRPCMessage, context: Omit<ToolContext, "cancelled">): Promise<JSONRPCMessage>;
}

/** A chat refusal (a stale resume: 409) is the caller's to hear; anything else is logged. */
function refusalOf(
  error: unknown,
  request: RequestLike,
  context: Omit<ToolContext, "cancelled">,
): TaskRefusal {
  if (error instanceof TaskRefusal) return error;
  if (error instanceof AtriumHttpError && error.status < 500) {
    return new TaskRefusal(ErrorCode.InvalidParams, `Invalid params: ${error.message}`);
  }
  context.onError(error, `MCP ${request.method}`);
  return new TaskRefusal(
    ErrorCode.InternalError,
    "The task could not be reached inside Atrium; the operator can find the details in the gateway log.",
  );
}

const taskMethods = new Set(["tasks/get", "tasks/update", "tasks/cancel"]);

export function createAskTasks(): AskTasks {
  async function runOf(context: Omit<ToolContext, "cancelled">, taskId: unknown) {
    const step = stepOfTaskId(context, taskId);
    if (step === undefined) throw unknownTask(taskId);
    try {
      return await context.chat.run(step.workflowId, step.stepId);
    } catch (error) {
      if (error instanceof AtriumHttpError && error.status === 404) throw unknownTask(taskId);
      throw error;
    }
  }

  async function call(
    request: RequestLike,
    context: Omit<ToolContext, "cancelled">,
  ): Promise<Record<string, unknown>> {
    if (request.method === "tools/call") {
      const args = askArguments.parse(request.params?.arguments ?? {});
      if (args.resume) {
        const { workflow_id: workflowId, step_id: stepId } = args.resume;
        const run = await runOf(context, taskIdOf(workflowId, stepId));
        if (args.resume.approval !== undefined || args.resume.connection_id !== undefined) {
          await context.chat.resumeInBackground(workflowId, stepId, {
            pause: run.pause,
            approval: args.resume.approval,
            connection_id: args.resume.connection_id,
          });
        }
        return { resultType: "task", ...taskOf(await context.chat.run(workflowId, stepId)) };
      }
      const accepted = await context.chat.start({
        message: args.message ?? "",
        workflow_id: `${workflowPrefix(context as ToolContext)}${randomBytes(6).toString("hex")}`,
        agent_id: context.scope.agentId,
        system_prompt: args.system_prompt,
        context: { tenant_id: context.scope.tenantId, user_id: context.scope.userId },
      });
      // Read back from the store: the task exists for tasks/get before its id is handed out.
      const run = await context.chat.run(accepted.workflow_id, accepted.step_id);
      return { resultType: "task", ...taskOf(run) };
    }
    if (!declaresTasks(request)) {
      throw new TaskRefusal(
        StatelessErrorCode.MissingRequiredClientCapability,
        `Missing required client capability: ${request.method} needs the ${TASKS_EXTENSION} extension declared in the request's client capabilities`,
        { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
      );
    }
    const taskId = request.params?.taskId;
    const run = await runOf(context, taskId);
    if (request.method === "tasks/get") return detailedTaskOf(run);
    if (request.method === "tasks/cancel") {
      if (["queued", "running", "yielded"].includes(run.status)) {
        await context.chat.cancel(run.workflow_id, run.step_id);
      }
      return {};
    }
    const responses = request.params?.inputResponses;
    if (typeof responses !== "object" || responses === null || Array.isArray(responses)) {
      throw new TaskRefusal(
        ErrorCode.InvalidParams,
        "Invalid params: inputResponses must be an object",
      );
    }
    if (run.status !== "yielded") {
      throw new TaskRefusal(
        ErrorCode.InvalidParams,
        `Invalid params: task ${String(taskId)} is ${taskStatusOf[run.status]}, not input_required`,
      );
    }
    const resume = resumeOf(run, responses as Record<string, unknown>);
    if (typeof resume === "string") {
      throw new TaskRefusal(ErrorCode.InvalidParams, `Invalid params: ${resume}`);
    }
    await context.chat.resumeInBackground(run.workflow_id, run.step_id, resume);
    return {};
  }

  return {
    handles(message) {
      const request = message as RequestLike;
      if (request.id === undefined || request.method === undefined) return false;
      if (taskMethods.has(request.method)) return true;
      if (request.method !== "tools/call" || request.params?.name !== "ask") return false;
      if (!declaresTasks(request)) return false;
      // Arguments ask refuses are the SDK server's to answer, as for any call.
      const args = askArguments.safeParse(request.params.arguments ?? {});
      return args.success && (args.data.message !== undefined || args.data.resume !== undefined);
    },
    async answer(message, context) {
      const request = message as RequestLike & { id: string | number };
      try {
        const result = await call(request, context);
        return { jsonrpc: "2.0", id: request.id, result };
      } catch (error) {
        const refusal = refusalOf(error, request, context);
        return {
          jsonrpc: "2.0",
          id: request.id,
          error: { code: refusal.code, message: refusal.message, data: refusal.data },
        };
      }
    },
  };
}
