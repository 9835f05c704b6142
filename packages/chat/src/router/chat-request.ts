import { randomBytes } from "node:crypto";
import { type BusyPolicy, busyPolicies, type ResumeInput } from "../runs/run-manager.js";
import { isValidTraceId } from "../trace/trace-event.js";

export interface ChatRequest {
  message: string;
  workflowId: string;
  agentId: string;
  systemPrompt: string;
  context: Record<string, unknown>;
  /** What to do while another step of the workflow runs. Default `reject`. */
  onBusy: BusyPolicy;
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
  const context = optionalObject(fields, "context");
  const onBusy = optionalString(fields, "on_busy") ?? "reject";
  if (!busyPolicies.includes(onBusy as BusyPolicy)) {
    throw new Error(`on_busy must be one of ${busyPolicies.join(", ")}`);
  }
  return {
    message: fields.message,
    workflowId: workflowId ?? newWorkflowId(),
    agentId: optionalString(fields, "agent_id") || "chat",
    systemPrompt: optionalString(fields, "system_prompt") ?? "",
    context: context ?? {},
    onBusy: onBusy as BusyPolicy,
  };
}

const optionalObject = (
  body: Record<string, unknown>,
  field: string,
): Record<string, unknown> | undefined => {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "object" || Array.isArray(value)) {
    throw new Error(`${field} must be an object or null`);
  }
  return value as Record<string, unknown>;
};

export interface ResumeRequest extends ResumeInput {
  /** Answer 202 at once instead of waiting for the step. */
  background: boolean;
}

/** Validates a resume body (all fields optional); the error message names the offending field. */
export function parseResumeRequest(body: unknown): ResumeRequest {
  if (body === undefined || body === null || body === "") return { background: false };
  if (typeof body !== "object" || Array.isArray(body)) {
    throw new Error("request body must be a JSON object");
  }
  const fields = body as Record<string, unknown>;
  const resume: ResumeRequest = { background: false };
  if (fields.pause !== undefined && fields.pause !== null) {
    if (!Number.isInteger(fields.pause) || (fields.pause as number) < 0) {
      throw new Error("pause must be a non-negative integer");
    }
    resume.pause = fields.pause as number;
  }
  const approval = optionalString(fields, "approval");
  if (approval !== undefined) {
    if (approval !== "approve" && approval !== "deny") {
      throw new Error("approval must be approve or deny");
    }
    resume.approval = approval;
  }
  const connectionId = optionalString(fields, "connection_id");
  if (connectionId !== undefined) {
    if (connectionId.trim() === "") throw new Error("connection_id must not be empty");
    resume.connection_id = connectionId;
  }
  const context = optionalObject(fields, "context");
  if (context) resume.context = context;
  if (fields.background !== undefined && fields.background !== null) {
    if (typeof fields.background !== "boolean") throw new Error("background must be a boolean");
    resume.background = fields.background;
  }
  return resume;
}
