// Bodies of the memory REST API (/api/v1) as they travel: proto field names, RFC 3339 times,
// bytes as base64.

export type EventRole = "user" | "agent" | "system";
export type EventType = "message" | "thought" | "action" | "observation";
/** Where an event's text came from; a `memory` turn (quoted back from memory) is no search evidence. */
export type EventSource = "user" | "agent" | "system" | "tool" | "memory";

export interface CreateSessionInput {
  tenant_id: string;
  user_id: string;
  agent_id?: string;
  metadata?: Record<string, string>;
}

export interface CreateSessionResult {
  session_id: string;
  created_at: string;
}

export interface InteractionInput {
  user_message: string;
  agent_response?: string;
  /** Where agent_response came from; default `agent`. */
  agent_response_source?: "agent" | "tool" | "memory";
  metadata?: Record<string, string>;
  timestamp?: string;
}

/** Options of a write a client may retry. */
export interface WriteOptions {
  /**
   * Sent as `Idempotency-Key`: a retry with the same key (within a day) returns the first
   * result and stores nothing again, whichever instance answers.
   */
  idempotencyKey?: string;
}

export interface StoreInteractionResult {
  success: boolean;
  interaction_id: string;
}

export interface EventInput {
  type: EventType;
  role?: EventRole;
  /** Default: the role. */
  source?: EventSource;
  content?: string;
  metadata?: Record<string, string>;
  timestamp?: string;
  /** Base64; needs mime_type and a blob store on the server (else 412). */
  payload?: string;
  mime_type?: string;
}

export interface StoreEventResult {
  success: boolean;
  event_id: string;
}

export interface StmEvent {
  role: string;
  type: string;
  content: string;
  timestamp?: string;
  metadata: Record<string, string>;
  blob_uri: string;
  blob_mime_type: string;
  source: string;
}

export interface DialoguePage {
  id: string;
  session_id: string;
  topic: string;
  summary: string;
  timestamp?: string;
  metadata: Record<string, string>;
}

export interface MemoryContext {
  stm_events: StmEvent[];
  relevant_pages: DialoguePage[];
  segments: unknown[];
  user_persona?: unknown;
  ltpm?: { status: string; message: string };
}

export interface ContextQuery {
  limit?: number;
  /** Chooses dialogue pages by semantic search instead of recency. */
  query?: string;
}

export interface SearchInput {
  query: string;
  limit?: number;
  similarity_threshold?: number;
  filter?: Record<string, string>;
}

export interface SearchResult {
  content: string;
  /** Cosine similarity, higher is closer. */
  similarity_score: number;
  source_type: string;
  source_id: string;
  timestamp?: string;
}

export interface MemoryHealth {
  status: "healthy" | "degraded";
  dependencies: Record<string, string>;
  timestamp?: string;
}

export interface AnalyticsTriggerResult {
  success: boolean;
  message: string;
}

/** What Forget erases: exactly one of given events or a whole scope of the session's user. */
export type ForgetInput =
  | { event_ids: string[]; scope?: never }
  /** `agent`: the session's user with the session's agent; `user`: across all agents. */
  | { scope: "agent" | "user"; event_ids?: never };

export interface ForgetResult {
  success: boolean;
  /** The audit record of the erasure. */
  erasure_id: string;
  events_erased: number;
  chains_erased: number;
  chains_rebuilt: number;
  entities_erased: number;
  payloads_erased: number;
}
