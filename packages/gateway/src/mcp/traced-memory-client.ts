import { inMemoryOperation } from "@atrium/kit";
import type { MemoryClient } from "@atrium/sdk";

/**
 * The MCP tools' memory client with OpenTelemetry's GenAI memory-operation spans around its
 * writes, searches and erasures (their HTTP calls inside). The client knows sessions, not
 * scopes, so no `gen_ai.memory.store.id`; a GetContext without a query only reads the window
 * and is no memory operation of the conventions.
 */
export function traceMemoryOperations(memory: MemoryClient, baseUrl: string): MemoryClient {
  const url = new URL(baseUrl);
  return {
    ...memory,
    storeInteraction: (id, input, options) =>
      inMemoryOperation(
        "create_memory",
        { url, recordCount: input.agent_response === undefined ? 1 : 2 },
        () => memory.storeInteraction(id, input, options),
      ),
    storeEvent: (id, input, options) =>
      inMemoryOperation("create_memory", { url, recordCount: 1 }, () =>
        memory.storeEvent(id, input, options),
      ),
    getContext: (id, query) =>
      query?.query
        ? inMemoryOperation("search_memory", { url }, async (span) => {
            const context = await memory.getContext(id, query);
            span?.setAttribute(
              "gen_ai.memory.record.count",
              context.stm_events.length + context.relevant_pages.length,
            );
            return context;
          })
        : memory.getContext(id, query),
    search: (id, input) =>
      inMemoryOperation("search_memory", { url }, async (span) => {
        const results = await memory.search(id, input);
        span?.setAttribute("gen_ai.memory.record.count", results.length);
        return results;
      }),
    // A scope's erasure attempts records unknown up front: the count is then those erased.
    forget: (id, input) => {
      const ids = input.event_ids;
      const target = {
        url,
        recordCount: ids?.length,
        recordId: ids?.length === 1 ? ids[0] : undefined,
      };
      return inMemoryOperation("delete_memory", target, async (span) => {
        const result = await memory.forget(id, input);
        if (!ids) span?.setAttribute("gen_ai.memory.record.count", result.events_erased);
        return result;
      });
    },
  };
}
