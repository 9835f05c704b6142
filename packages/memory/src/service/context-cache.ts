import type { memoryV1 } from "@atrium/api";
import { freezeResult } from "@atrium/kit";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { StmEvent } from "../domain.js";
import type { ChainRecord } from "../store/chains.js";
import { toDialoguePage, toStmEventMessage } from "./proto-messages.js";

/**
 * GetContext's caching contract, in one place. A context is built from two lists, and each layer
 * below keeps its answer only while the data under it is unchanged:
 *
 * 1. Redis holds the lists: the STM window (`stm:{scope}`, `stm-window.ts`) and the recent
 *    dialogue pages (`pages:{scope}`, `store/recent-pages.ts`), under the deployment's prefix
 *    (`MEMORY_REDIS_PREFIX`). Every write path updates or drops
 *    its list after the durable write; a failed cache write drops the list (rebuilt from
 *    PostgreSQL on the next read), and keys whose drop failed while Redis was away are dropped
 *    before the cache is used again (`dropStale`).
 * 2. The near cache (`createNearCache` in the kit) keeps the parsed lists in process memory
 *    while Redis reports their keys unchanged (client-side tracking): any instance's write to
 *    `stm:` or `pages:` evicts them everywhere, and losing the tracking connection empties it.
 *    So every caller of an unchanged scope gets the very same list objects.
 * 3. This module: the response built from a pair of those list objects is built once and
 *    frozen, so the transport writes its JSON once (`freezeResult`). It is keyed by the lists'
 *    identity in WeakMaps: a new list (anything changed, or lists read straight from the stores,
 *    as for a query or a limit beyond the window) is a new key, and old ones go with their
 *    garbage. Nothing here can be stale: it holds no data the lists do not.
 *
 * Reading a context records heat on its pages off the request path (`chain-access.ts`), which
 * invalidates the scope's recent pages after the write, so the next read carries the new
 * access time.
 */
export type GetContextResult = MessageInitShape<typeof memoryV1.GetContextResponseSchema>;
export type DialoguePageMessage = MessageInitShape<typeof memoryV1.DialoguePageSchema>;

/** A context of the STM window and pages already in their API shape; not cached. */
export function buildContext(stm: StmEvent[], pages: DialoguePageMessage[]): GetContextResult {
  return {
    stmEvents: stm.map(toStmEventMessage),
    relevantPages: pages,
    segments: [],
    ltpm: {
      status: "not_implemented",
      message: "long-term persona memory is planned; use SearchMemory for long-term memory",
    },
  };
}

export function createContextMemo() {
  const contexts = new WeakMap<StmEvent[], WeakMap<ChainRecord[], GetContextResult>>();
  return {
    /** The context of these two lists: the same frozen object for the same two lists. */
    contextOf(stm: StmEvent[], pages: ChainRecord[]): GetContextResult {
      let byPages = contexts.get(stm);
      if (byPages === undefined) {
        byPages = new WeakMap();
        contexts.set(stm, byPages);
      }
      let context = byPages.get(pages);
      if (context === undefined) {
        context = freezeResult(buildContext(stm, pages.map(toDialoguePage)));
        byPages.set(pages, context);
      }
      return context;
    },
  };
}
