import type { ForgetResult } from "@atrium/sdk";
import { callApi, queryString } from "./api";

// The memory service's operator views, through the gateway (/v1/operator/memory/*). Every
// string in them is stored memory content: untrusted, shown only as text.

export interface MemoryUser {
  user_id: string;
  agents: string[];
  sessions: number;
  last_event_at: string | null;
}

export interface StmEvent {
  id: string;
  role: string;
  type: string;
  content: string;
  timestamp: string;
  metadata: Record<string, string>;
}

export interface MemoryScope {
  agent_id: string;
  sessions: { id: string; created_at: string }[];
  stm: StmEvent[];
}

export interface Chain {
  id: string;
  agent_id: string;
  topic: string;
  summary: string;
  status: string;
  heat: number;
  last_event_at: string;
  turns: { id: string; role: string; content: string; at: string }[];
}

export interface UserMemory {
  scopes: MemoryScope[];
  chains: Chain[];
}

export interface GraphNode {
  id: string;
  name: string;
  type: string;
  community: number | null;
  bridge_score: number | null;
  mentions: number;
}

export interface GraphEdge {
  from: string;
  to: string;
  relation: string;
}

export interface MemoryGraph {
  nodes: GraphNode[];
  edges: GraphEdge[];
}

export interface EntityFacts {
  entity: GraphNode;
  facts: {
    relation: string;
    direction: "out" | "in";
    other: string;
    confidence: number;
    weight: number;
  }[];
}

export interface SearchResult {
  content: string;
  score: number;
  source_type: string;
  source_id: string;
  timestamp: string | null;
  lexical_rank: number | null;
  vector_rank: number | null;
}

/**
 * What an erasure took (counts only; the service audits who asked and which scope): Forget's
 * answer without its `success`.
 */
export type ErasureResult = Omit<ForgetResult, "success">;

export interface MemoryOwner {
  tenantId: string;
  userId: string;
}

const base = "/v1/operator/memory";
const ownerQuery = (owner: MemoryOwner) => ({ tenant_id: owner.tenantId, user_id: owner.userId });

export const memoryApi = {
  users: (tenantId: string) =>
    callApi<{ users: MemoryUser[] }>("GET", `${base}/users${queryString({ tenant_id: tenantId })}`),
  user: (owner: MemoryOwner) =>
    callApi<UserMemory>("GET", `${base}/user${queryString(ownerQuery(owner))}`),
  graph: (owner: MemoryOwner) =>
    callApi<MemoryGraph>("GET", `${base}/graph${queryString(ownerQuery(owner))}`),
  entity: (owner: MemoryOwner, id: string) =>
    callApi<EntityFacts>("GET", `${base}/entity${queryString({ ...ownerQuery(owner), id })}`),
  /** Erases the user across agents, or the one agent given ("" for no agent), for good. */
  forget: (owner: MemoryOwner, agentId?: string) =>
    callApi<ErasureResult>("POST", `${base}/forget`, {
      ...ownerQuery(owner),
      ...(agentId === undefined ? {} : { agent_id: agentId }),
    }),
  search: (owner: MemoryOwner, query: string) =>
    callApi<{ results: SearchResult[] }>("POST", `${base}/search`, {
      ...ownerQuery(owner),
      query,
    }),
};
