import type { Span } from "@opentelemetry/api";
import { inSpan, tracingEnabled } from "./tracing.js";

/** The memory operations of OpenTelemetry's GenAI conventions (`gen_ai.operation.name`). */
export type MemoryOperationName =
  | "create_memory_store"
  | "search_memory"
  | "create_memory"
  | "update_memory"
  | "upsert_memory"
  | "delete_memory"
  | "delete_memory_store";

export interface MemoryOperationTarget {
  /** The memory service's URL: its host and port are `server.address` and `server.port`. */
  url: URL;
  /** `gen_ai.memory.store.id`: the tenant ID, never a user ID or anything secret. */
  storeId?: string;
  /** `gen_ai.memory.record.id`, when the operation applies to one record. */
  recordId?: string;
  /** `gen_ai.memory.record.count` when known up front (records a write attempts). */
  recordCount?: number;
}

/**
 * Runs a call to the memory service inside a memory-operation CLIENT span named by the
 * operation, its transport's span a child, while tracing is on; off, `work` runs alone and
 * nothing is built. The query text and the records are content the conventions make opt-in:
 * they are never recorded. `work` adds what it learns (records a search returned).
 */
export function inMemoryOperation<T>(
  operation: MemoryOperationName,
  target: MemoryOperationTarget,
  work: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  if (!tracingEnabled()) return work(undefined);
  const { url } = target;
  const attributes = {
    "gen_ai.operation.name": operation,
    "server.address": url.hostname,
    "server.port": Number(url.port) || (url.protocol === "https:" ? 443 : 80),
    ...(target.storeId !== undefined ? { "gen_ai.memory.store.id": target.storeId } : {}),
    ...(target.recordId !== undefined ? { "gen_ai.memory.record.id": target.recordId } : {}),
    ...(target.recordCount !== undefined
      ? { "gen_ai.memory.record.count": target.recordCount }
      : {}),
  };
  return inSpan("atrium-memory-client", operation, attributes, work, "client");
}
