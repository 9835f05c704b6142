/** Memory is keyed by scope, not by session; `agentId` is "" when the session named none. */
export interface Scope {
  tenantId: string;
  userId: string;
  agentId: string;
}

export const EVENT_ROLES = ["user", "agent", "system"] as const;
export const EVENT_TYPES = ["message", "thought", "action", "observation"] as const;
export type EventRole = (typeof EVENT_ROLES)[number];
export type EventType = (typeof EVENT_TYPES)[number];
/**
 * Where an event's text came from: a person (`user`), the agent's own words (`agent`), the
 * system, a tool's output (`tool`), or memory quoted back (`memory`). A memory turn stays in the
 * context window, as it was said, but is never search evidence: quoted again it would echo what
 * memory already holds as if it were new (issue 34).
 */
export const EVENT_SOURCES = ["user", "agent", "system", "tool", "memory"] as const;
export type EventSource = (typeof EVENT_SOURCES)[number];

/**
 * Whether an event takes part in dialogue chains: user and agent messages do, system notes and
 * an agent's thoughts, actions and observations do not. Such an event is stored pending and its
 * write asks for a chain check. A quote of memory does not: it would restate its sources.
 */
export const joinsChains = (e: {
  role: EventRole;
  type: EventType;
  source?: EventSource;
}): boolean => e.type === "message" && e.role !== "system" && e.source !== "memory";

export interface SessionRecord extends Scope {
  id: string;
  metadata: Record<string, string>;
  createdAt: Date;
  updatedAt: Date;
}

export interface StmEvent {
  id: string;
  sessionId: string;
  role: EventRole;
  type: EventType;
  source: EventSource;
  content: string;
  metadata: Record<string, string>;
  blobUri?: string;
  blobMimeType?: string;
  timestamp: Date;
  /** How many repeated automation events this one stands for (1 when not coalesced). */
  coalescedCount: number;
}

export function scopeKey(scope: Scope): string {
  // Segments are URI-encoded so that a ":" inside an id cannot make two scopes collide.
  return [scope.tenantId, scope.userId, scope.agentId].map(encodeURIComponent).join(":");
}
