import { randomBytes } from "node:crypto";
import { isValidTraceId } from "../trace/trace-event.js";

export interface ChatRequest {
  message: string;
  workflowId: string;
  agentId: string;
  systemPrompt: string;
  context: Record<string, unknown>;
}

/** Longest accepted message; a chat turn beyond it is almost certainly a client bug. */
export const maxMessageLength = 100_000;

export const newWorkflowId = () => `chat_${randomBytes(6).toString("hex")}`;

const optionalString = (body: Record<string, unknown>, field: string): string | undefined => {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw new Error(`${field} must be a string or null`);
  return value;
};

/** Validates a ChatRequest body; the error message names the offending field. */
export function parseChatRequest(body: unknown): ChatRequest {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new Error("request body must be a JSON object with a string field 'message'");
  }
  const fields = body as Record<string, unknown>;
  if (typeof fields.message !== "string") {
    throw new Error(
      fields.message === undefined ? "message is required" : "message must be a string",
    );
  }
  if (fields.message.trim() === "") throw new Error("message must not be empty");
  if (fields.message.length > maxMessageLength) {
    throw new Error(`message must be at most ${maxMessageLength} characters`);
  }
  const workflowId = optionalString(fields, "workflow_id");
  if (workflowId !== undefined && !isValidTraceId(workflowId)) {
    throw new Error("workflow_id must be 1-128 characters of [A-Za-z0-9_-], starting alphanumeric");
  }
  const context = fields.context;
  if (
    context !== undefined &&
    context !== null &&
    (typeof context !== "object" || Array.isArray(context))
  ) {
    throw new Error("context must be an object or null");
  }
  return {
    message: fields.message,
    workflowId: workflowId ?? newWorkflowId(),
    agentId: optionalString(fields, "agent_id") || "chat",
    systemPrompt: optionalString(fields, "system_prompt") ?? "",
    context: (context as Record<string, unknown> | null | undefined) ?? {},
  };
}
