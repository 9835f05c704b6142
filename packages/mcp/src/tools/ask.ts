import { randomBytes } from "node:crypto";
import type { TraceEvent } from "@atrium/sdk";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
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

const askInput = {
  message: z.string().trim().min(1).describe("The task or question, self-contained."),
  system_prompt: z
    .string()
    .optional()
    .describe("Optional instructions placed before the task (tone, format, constraints)."),
};

const askOutput = {
  answer: z.string(),
  status: z.enum(["success", "failure", "yield"]),
  sources: z.array(z.looseObject({ title: z.string(), url: z.string() })),
  workflow_id: z.string(),
  step_id: z.string(),
  trace: z.string(),
};

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
        "something from the user), sources, workflow_id, step_id, trace}; trace is the URI of the " +
        "step's full trace resource.",
      inputSchema: askInput,
      outputSchema: askOutput,
      annotations: { openWorldHint: true },
    },
    (args, extra) => {
      const context = contextOf(extra);
      return guarded("ask", context.onError, async () => {
        const signal = callSignal(context, extra);
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
          return toolResult({
            answer: response.answer,
            status: response.status,
            sources: response.sources,
            workflow_id: response.workflow_id,
            step_id: response.step_id,
            trace: `atrium://traces/${response.workflow_id}/${response.step_id}`,
          });
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
