import { randomBytes } from "node:crypto";
import { setTimeout as delay } from "node:timers/promises";
import type { ChatResponse, ChatRunStatus, TraceEvent } from "@atrium/sdk";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult, ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { clientCapabilitiesOf, consentAnswer, consentItemsOf } from "../consent.js";
import { scopeTag } from "../scope.js";
import { callSignal, contextOf, type ToolContext } from "../tool-context.js";
import { guarded, McpToolError, toolResult } from "../tool-result.js";

/**
 * After the answer, how long the trace stream may take to deliver the step's last events. The
 * router publishes step_complete before it answers, so the stream normally ends at once; this
 * only bounds a stream that broke.
 */
const traceDrainMs = 10_000;

/** One progress line per trace event: what the agent is doing, in a few words. */
export function progressMessage(event: TraceEvent): string {
  const data = event.data;
  const detail = [data.thought, data.tool, data.summary, data.message, data.status].find(
    (value): value is string => typeof value === "string" && value !== "",
  );
  return detail ? `${event.type}: ${detail.slice(0, 200)}` : event.type;
}

/** Workflow ids of this scope: `mcp_<scope tag>_<random>`, readable only by the same scope. */
export const workflowPrefix = (context: ToolContext) => `mcp_${scopeTag(context.scope)}_`;

const resumeInput = z
  .object({
    workflow_id: z.string().min(1),
    step_id: z.string().min(1),
    approval: z
      .enum(["approve", "deny"])
      .optional()
      .describe("The user's decision on a pending approval."),
    connection_id: z
      .string()
      .min(1)
      .optional()
      .describe("The connection a pending credentials item asks for."),
  })
  .describe(
    "Continue a step an earlier ask yielded (its workflow_id and step_id) with the user's " +
      "decision or connection; with neither, waits for a step that goes on by itself (a consent " +
      "the user completed) and returns its answer.",
  );

export const askInput = {
  message: z
    .string()
    .trim()
    .min(1)
    .optional()
    .describe("The task or question, self-contained. Required unless resume is given."),
  system_prompt: z
    .string()
    .optional()
    .describe("Optional instructions placed before the task (tone, format, constraints)."),
  resume: resumeInput.optional(),
};

export type AskArguments = z.infer<z.ZodObject<typeof askInput>>;

const askOutput = {
  answer: z.string(),
  status: z.enum(["success", "failure", "yield"]),
  sources: z.array(z.looseObject({ title: z.string(), url: z.string() })),
  workflow_id: z.string(),
  step_id: z.string(),
  trace: z.string(),
  pending: z.array(z.looseObject({ kind: z.string(), detail: z.string() })).optional(),
  consent: z
    .array(z.object({ provider: z.string(), authorization_url: z.string(), detail: z.string() }))
    .optional(),
};

/** The fields ask reports of a step's answer, at its end or its pause. */
type StepAnswer = Pick<ChatResponse, "status" | "answer" | "sources"> & {
  pending?: readonly unknown[];
};

/** ask's result for a step's answer; a yield that waits for consent asks for it (consent.ts). */
export function askResult(
  answer: StepAnswer,
  workflowId: string,
  stepId: string,
  capabilities: ClientCapabilities | undefined,
): CallToolResult {
  const structured = {
    answer: answer.answer,
    status: answer.status,
    sources: answer.sources,
    workflow_id: workflowId,
    step_id: stepId,
    trace: `atrium://traces/${workflowId}/${stepId}`,
    ...(answer.pending ? { pending: answer.pending } : {}),
  };
  const consent = answer.status === "yield" ? consentItemsOf(answer.pending) : [];
  if (consent.length === 0) return toolResult(structured);
  return consentAnswer(consent, {
    capabilities,
    ref: `${workflowId}/${stepId}`,
    afterwards: `The step continues by itself once the account is connected; call ask with resume {workflow_id: "${workflowId}", step_id: "${stepId}"} for its answer.`,
    structured,
  });
}

/** Whether a workflow is one this scope's ask started (any other is not the caller's to touch). */
export const ownsWorkflow = (context: ToolContext, workflowId: string) =>
  workflowId.startsWith(workflowPrefix(context));

/** How often a resume that waits for a step reads its run. */
const runPollMs = 500;

const settled = (status: ChatRunStatus) => !["queued", "running"].includes(status);

/**
 * ask with resume: the decision or connection goes to the yielded step, which continues where it
 * stopped; without one, the step's current answer, after waiting while it runs.
 */
async function resumeStep(
  resume: NonNullable<AskArguments["resume"]>,
  context: ToolContext,
  signal: AbortSignal,
  capabilities: ClientCapabilities | undefined,
): Promise<CallToolResult> {
  const { workflow_id: workflowId, step_id: stepId } = resume;
  if (!ownsWorkflow(context, workflowId)) {
    throw new McpToolError(`No step ${workflowId}/${stepId} of this user was found.`);
  }
  const supplied = resume.approval !== undefined || resume.connection_id !== undefined;
  let run = await context.chat.run(workflowId, stepId);
  if (supplied) {
    if (run.status !== "yielded") {
      throw new McpToolError(
        `Step ${workflowId}/${stepId} is ${run.status}, not waiting for a decision; call ask with resume and no decision for its answer.`,
      );
    }
    const response = await context.chat.resume(
      workflowId,
      stepId,
      { pause: run.pause, approval: resume.approval, connection_id: resume.connection_id },
      { signal },
    );
    return askResult(response, workflowId, stepId, capabilities);
  }
  while (!settled(run.status)) {
    await delay(runPollMs, undefined, { signal });
    run = await context.chat.run(workflowId, stepId);
  }
  if (run.response === undefined) {
    throw new McpToolError(
      `Step ${workflowId}/${stepId} is ${run.status}${run.reason ? `: ${run.reason}` : ""}.`,
    );
  }
  return askResult(run.response, workflowId, stepId, capabilities);
}

/**
 * ask: one message through POST /chat's kernel. The step's trace events are followed on the trace
 * stream and sent as progress notifications in order; cancelling the MCP request aborts the POST,
 * which stops the kernel, and the step's trace ends with its cancelled outcome.
 */
export function registerAskTool(server: McpServer): void {
  server.registerTool(
    "ask",
    {
      title: "Ask the Atrium agent",
      description:
        "Hand a task to the Atrium agent, which routes it to a researcher, coder, browser or " +
        "communicator sub-agent, uses the user's memory, and answers once. Use it for tasks you " +
        "cannot do yourself with your own tools. It can take a while; progress notifications " +
        "report each step. Returns {answer, status (success, failure or yield: the agent needs " +
        "something from the user, listed in pending), sources, workflow_id, step_id, trace}; " +
        "trace is the URI of the step's full trace resource. A yielded step is continued with " +
        "resume and the user's decision, never by asking again. When an account must be " +
        "connected first, consent holds the link to give the user.",
      inputSchema: askInput,
      outputSchema: askOutput,
      annotations: { openWorldHint: true },
    },
    (args, extra) => {
      const context = contextOf(extra);
      const capabilities = clientCapabilitiesOf(extra._meta, server.server.getClientCapabilities());
      return guarded("ask", context.onError, async () => {
        const signal = callSignal(context, extra);
        if (args.resume) return resumeStep(args.resume, context, signal, capabilities);
        if (args.message === undefined) {
          throw new McpToolError(
            "ask needs message (a new task) or resume (to continue a step it yielded).",
          );
        }
        const workflowId = `${workflowPrefix(context)}${randomBytes(6).toString("hex")}`;
        const progressToken = extra._meta?.progressToken;
        const following = new AbortController();
        const followed =
          progressToken === undefined
            ? Promise.resolve()
            : (async () => {
                let progress = 0;
                for await (const event of context.chat.stream(workflowId, {
                  signal: following.signal,
                })) {
                  progress += 1;
                  await extra.sendNotification({
                    method: "notifications/progress",
                    params: { progressToken, progress, message: progressMessage(event) },
                  });
                }
              })().catch((error: unknown) => {
                if (!following.signal.aborted) context.onError(error, "ask trace stream");
              });
        try {
          const response = await context.chat.send(
            {
              message: args.message,
              workflow_id: workflowId,
              agent_id: context.scope.agentId,
              system_prompt: args.system_prompt,
              // The kernel's memory scope; never taken from the model's arguments.
              context: { tenant_id: context.scope.tenantId, user_id: context.scope.userId },
            },
            { signal },
          );
          let drainTimer: NodeJS.Timeout | undefined;
          await Promise.race([
            followed,
            new Promise((resolve) => {
              drainTimer = setTimeout(resolve, traceDrainMs);
            }),
          ]);
          clearTimeout(drainTimer);
          return askResult(response, response.workflow_id, response.step_id, capabilities);
        } catch (error) {
          if (signal.aborted) {
            throw new McpToolError(
              `ask was cancelled; the agent stopped and workflow ${workflowId} records the cancellation.`,
            );
          }
          throw error;
        } finally {
          following.abort();
        }
      });
    },
  );
}
