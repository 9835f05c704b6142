import {
  type AgentResult,
  ask,
  memoryNotes,
  runTool,
  type StepContext,
  type SubAgent,
} from "../kernel/step-context.js";

export interface CommunicatorOptions {
  /** Where messages are sent: a JSON POST of `{text, workflow_id, agent_id}` (Slack-compatible). */
  webhookUrl?: string;
  /** Sending waits for `context.approved === true` unless this is false. Default true. */
  requireApproval?: boolean;
  timeoutMs?: number;
}

/**
 * Drafts a message (with the LLM, or the task text as given without one) and sends it through
 * the configured webhook. A missing webhook or a send nobody approved yields with the draft.
 */
export function createCommunicator(options: CommunicatorOptions): SubAgent {
  const requireApproval = options.requireApproval ?? true;
  return {
    role: "communicator",
    async run(step: StepContext): Promise<AgentResult> {
      const draft = step.llm
        ? (
            await ask(
              step,
              "communicator",
              "draft_message",
              [
                {
                  role: "user",
                  content: [
                    "Draft the message this request asks for. Reply with the message text only.",
                    `Request: ${step.task}`,
                    memoryNotes(step),
                  ]
                    .filter(Boolean)
                    .join("\n\n"),
                },
              ],
              { streamThinking: true },
            )
          ).trim()
        : step.task.trim();
      if (!options.webhookUrl) {
        return {
          status: "yield",
          summary: `Draft ready, but no channel is configured to send it:\n\n${draft}`,
          payload: { draft },
          pending: [{ kind: "credentials", detail: "COMMUNICATOR_WEBHOOK_URL is not configured" }],
        };
      }
      if (requireApproval && step.context.approved !== true) {
        return {
          status: "yield",
          summary: `Draft ready; send it by repeating the request with context.approved = true:\n\n${draft}`,
          payload: { draft },
          pending: [{ kind: "approval", detail: "sending this message needs approval" }],
        };
      }
      const webhookUrl = options.webhookUrl;
      const status = await runTool(
        step,
        "communicator",
        "webhook.send",
        { chars: draft.length },
        async () => {
          const response = await fetch(webhookUrl, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({
              text: draft,
              workflow_id: step.trace.workflowId,
              agent_id: step.agentId,
            }),
            signal: AbortSignal.any([
              AbortSignal.timeout(options.timeoutMs ?? 10_000),
              step.signal,
            ]),
          });
          await response.body?.cancel();
          if (!response.ok) throw new Error(`webhook answered HTTP ${response.status}`);
          return response.status;
        },
      );
      return {
        status: "success",
        summary: `Sent:\n\n${draft}`,
        payload: { draft, webhook_status: status },
      };
    },
  };
}
