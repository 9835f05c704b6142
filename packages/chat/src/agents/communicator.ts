import { deadlineSignal, type GatewayClient } from "@atrium/sdk";
import type { PendingItem } from "../kernel/kernel-types.js";
import {
  type AgentResult,
  ask,
  memoryNotes,
  runTool,
  type StepContext,
  type SubAgent,
} from "../kernel/step-context.js";
import { connectionFor, repairFor } from "./connection-consent.js";
import { reconnectNeeded, sendWithConnection } from "./connection-send.js";
import type { UrlPolicy } from "./url-policy.js";

export interface CommunicatorOptions {
  /** Where messages are sent: a JSON POST of `{text, workflow_id, agent_id}` (Slack-compatible). */
  webhookUrl?: string;
  /** The gateway whose broker connections can send; without it only the webhook can. */
  gateway?: GatewayClient;
  /** The connection to send with when the request names none (`context.connection_id`). */
  connectionId?: string;
  /** Where a connection sends when the request names no `context.send_url`. */
  sendUrl?: string;
  /** Hosts a connection's credential may be sent to. */
  sendPolicy: UrlPolicy;
  /** Sending waits for `context.approved === true` unless this is false. Default true. */
  requireApproval?: boolean;
  timeoutMs?: number;
}

type Channel =
  | { kind: "webhook"; url: string }
  | { kind: "connection"; connectionId: string; url: string; gateway: GatewayClient }
  | { kind: "missing"; detail: string }
  /** The provider the request names has no usable connection: a person has to connect it. */
  | { kind: "unconnected"; pending: PendingItem };

const text = (value: unknown): string | undefined =>
  typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;

/**
 * A connection (named by the request or configured) wins over a provider (`context.provider`:
 * its newest active connection in `context.workspace_id`, or a consent for one), which wins
 * over the webhook.
 */
async function channelFor(options: CommunicatorOptions, step: StepContext): Promise<Channel> {
  const { context } = step;
  const connectionId = text(context.connection_id) ?? options.connectionId;
  const provider = text(context.provider);
  const sender = connectionId ? `connection ${connectionId}` : `provider ${provider}`;
  if (connectionId || provider) {
    if (!options.gateway) {
      return {
        kind: "missing",
        detail: `GATEWAY_URL is not configured, so ${sender} cannot send`,
      };
    }
    const url = text(context.send_url) ?? options.sendUrl;
    if (!url) {
      return {
        kind: "missing",
        detail: `no URL to send to with ${sender}: set context.send_url or COMMUNICATOR_SEND_URL`,
      };
    }
    const gateway = options.gateway;
    if (connectionId) return { kind: "connection", connectionId, url, gateway };
    const found = await runTool(
      step,
      "communicator",
      "connection.find",
      { provider, workspace_id: text(context.workspace_id) ?? null },
      () =>
        connectionFor(gateway, {
          provider: provider as string,
          workspaceId: text(context.workspace_id),
          purpose: "send this message",
          signal: step.signal,
        }),
      // The authorization URL carries the flow's state: the trace names the kind only.
      (answer) =>
        "pending" in answer
          ? { pending: answer.pending.kind }
          : { connection_id: answer.connectionId },
    );
    if ("pending" in found) return { kind: "unconnected", pending: found.pending };
    return { kind: "connection", connectionId: found.connectionId, url, gateway };
  }
  if (options.webhookUrl) return { kind: "webhook", url: options.webhookUrl };
  return {
    kind: "missing",
    detail:
      "COMMUNICATOR_WEBHOOK_URL is not configured and no connection was named (context.connection_id, context.provider or COMMUNICATOR_CONNECTION_ID)",
  };
}

const held = (draft: string, summary: string, pending: PendingItem, extra = {}): AgentResult => ({
  status: "yield",
  summary: `${summary}:\n\n${draft}`,
  payload: { draft, ...extra },
  pending: [pending],
});

/**
 * Drafts a message (with the LLM, or the task text as given without one) and sends it through the
 * configured webhook or with a broker connection's credential. A missing channel, a send nobody
 * approved or a connection a human must repair yields with the draft.
 */
export function createCommunicator(options: CommunicatorOptions): SubAgent {
  const requireApproval = options.requireApproval ?? true;
  const timeoutMs = options.timeoutMs ?? 10_000;
  return {
    role: "communicator",
    async run(step: StepContext): Promise<AgentResult> {
      // A resumed step sends the draft the person approved, not a new one.
      const approved = (step.resumed?.payload as { draft?: unknown } | undefined)?.draft;
      const draft =
        typeof approved === "string"
          ? approved
          : step.llm
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
      const channel = await channelFor(options, step);
      if (channel.kind === "unconnected") {
        return held(draft, `Draft ready, but ${channel.pending.detail}`, channel.pending);
      }
      if (channel.kind === "missing") {
        return held(draft, `Draft ready, but there is no channel to send it: ${channel.detail}`, {
          kind: "credentials",
          detail: channel.detail,
        });
      }
      if (channel.kind === "connection" && !options.sendPolicy.allows(channel.url)) {
        return held(draft, `Draft ready; sending to ${channel.url} needs approval`, {
          kind: "approval",
          detail: `sending with connection ${channel.connectionId} to ${channel.url} needs approval: its host is not named in AGENT_ALLOWED_HOSTS`,
        });
      }
      if (requireApproval && step.context.approved !== true) {
        return held(
          draft,
          "Draft ready; send it by repeating the request with context.approved = true",
          { kind: "approval", detail: "sending this message needs approval" },
        );
      }
      const message = { text: draft, workflow_id: step.trace.workflowId, agent_id: step.agentId };
      const signal = deadlineSignal(timeoutMs, step.signal);
      if (channel.kind === "webhook") {
        const status = await runTool(
          step,
          "communicator",
          "webhook.send",
          { chars: draft.length },
          async () => {
            const response = await fetch(channel.url, {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: JSON.stringify(message),
              signal,
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
      }
      const { connectionId, url, gateway } = channel;
      const target = text(step.context.channel);
      let status: number;
      try {
        // The arguments name the connection and host only: the token stays inside the SDK.
        status = await runTool(
          step,
          "communicator",
          "connection.send",
          { connection_id: connectionId, host: new URL(url).host, chars: draft.length },
          () =>
            sendWithConnection(gateway, {
              connectionId,
              url,
              workspaceId: text(step.context.workspace_id),
              body: target ? { ...message, channel: target } : message,
              signal,
            }),
        );
      } catch (error) {
        const detail = reconnectNeeded(error, connectionId);
        if (!detail) throw error;
        const pending = await repairFor(
          gateway,
          connectionId,
          {
            provider: text(step.context.provider),
            workspaceId: text(step.context.workspace_id),
            signal: step.signal,
          },
          detail,
        );
        return held(draft, `Draft ready, but connection ${connectionId} cannot send it`, pending, {
          connection_id: connectionId,
        });
      }
      return {
        status: "success",
        summary: `Sent:\n\n${draft}`,
        payload: { draft, connection_id: connectionId, send_status: status },
      };
    },
  };
}
