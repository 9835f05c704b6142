import { requestPrincipal } from "@atrium/kit";
import type { FastifyRequest } from "fastify";
import { type PendingItem, pendingKinds } from "../kernel/pending-item.js";
import type { RunRecord, YieldedQuery } from "../runs/run-store.js";

/** The query of GET /chat/runs, validated; the error message names the field. */
export function parseYieldedQuery(query: Record<string, string | undefined>): YieldedQuery {
  const { status, pending, limit: rawLimit = "50", cursor } = query;
  if (status !== "yielded") {
    throw new Error("status must be yielded (the list shows the steps waiting for something)");
  }
  if (pending !== undefined && !pendingKinds.includes(pending as PendingItem["kind"])) {
    throw new Error(`pending must be one of ${pendingKinds.join(", ")}`);
  }
  const limit = Number(rawLimit);
  if (!/^\d{1,3}$/.test(rawLimit) || limit < 1 || limit > 200) {
    throw new Error("limit must be an integer from 1 to 200");
  }
  return {
    limit,
    ...(pending ? { pending: pending as PendingItem["kind"] } : {}),
    ...(cursor !== undefined ? { after: cursorPosition(cursor) } : {}),
  };
}

/** The position after a page's last run, opaque to clients. */
export const cursorOf = (run: RunRecord) =>
  Buffer.from(JSON.stringify([run.updated_at, run.workflow_id, run.step_id])).toString("base64url");

function cursorPosition(cursor: string): NonNullable<YieldedQuery["after"]> {
  try {
    const [updatedAt, workflowId, stepId] = JSON.parse(
      Buffer.from(cursor, "base64url").toString("utf8"),
    ) as unknown[];
    if (
      typeof updatedAt === "string" &&
      !Number.isNaN(Date.parse(updatedAt)) &&
      typeof workflowId === "string" &&
      typeof stepId === "string"
    ) {
      return { updated_at: updatedAt, workflow_id: workflowId, step_id: stepId };
    }
  } catch {
    // Answered below like any other cursor this list did not give.
  }
  throw new Error("cursor must be a next_cursor of an earlier page");
}

const text = (value: unknown) => (typeof value === "string" && value !== "" ? value : undefined);

/**
 * A waiting step as the list shows it: what it waits for, the draft it would act on (its answer
 * at the pause), who asked and when. No checkpoint, no other context.
 */
export function yieldedView(run: RunRecord): Record<string, unknown> {
  const context = run.request.context;
  return {
    workflow_id: run.workflow_id,
    step_id: run.step_id,
    pause: run.pauses,
    pending: run.response?.pending ?? [],
    draft: run.response?.answer ?? "",
    message: run.request.message,
    asked_by: {
      user_id: text(context.user_id) ?? "anonymous",
      ...(text(context.session_id) ? { session_id: text(context.session_id) } : {}),
      agent_id: run.request.agent_id,
      workflow_id: run.workflow_id,
    },
    asked_at: run.updated_at,
    created_at: run.created_at,
  };
}

/**
 * Who the chat host's authentication admitted the caller as, for the audit of an approval: the
 * JWT's tenant and user when JWT auth is on; otherwise the mechanism that admitted the caller
 * (the host's API key is shared, so it names no person; through the console it is the gateway's
 * key); `unauthenticated` on a host without authentication. Never what the request's headers
 * claim: with auth off, anyone could send any of them.
 */
export function callerOf(request: FastifyRequest): string {
  const principal = requestPrincipal(request);
  switch (principal.kind) {
    case "user": {
      const { tenantId, userId, agentId } = principal.identity;
      return `user ${tenantId}/${userId}${agentId ? ` (agent ${agentId})` : ""}`;
    }
    case "api_key":
      return "api key";
    case "client_certificate":
      return "client certificate";
    case "anonymous":
      return "unauthenticated";
  }
}
