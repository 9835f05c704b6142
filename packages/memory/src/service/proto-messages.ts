import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { StmEvent } from "../domain.js";
import type { ChainRecord } from "../store/chains.js";
import type { Turn } from "../store/turns.js";

/** An STM event as the API's StmEvent message. */
export function toStmEventMessage(e: StmEvent) {
  return {
    role: e.role,
    type: e.type,
    content: e.content,
    timestamp: timestampFromDate(e.timestamp),
    // A copy: GetContext freezes its messages, and the event's own map is not its to freeze.
    metadata:
      e.coalescedCount > 1
        ? { ...e.metadata, coalesced_count: String(e.coalescedCount) }
        : { ...e.metadata },
    blobUri: e.blobUri ?? "",
    blobMimeType: e.blobMimeType ?? "",
    source: e.source,
  };
}

/** A chain as the API's DialoguePage message, with its provenance (the events it came from). */
export function toDialoguePage(c: ChainRecord) {
  return {
    id: c.id,
    sessionId: c.sessionId,
    topic: c.topic,
    summary: c.summary,
    timestamp: timestampFromDate(c.lastEventAt),
    metadata: {
      ...c.metadata,
      agent_id: c.scope.agentId,
      status: c.status,
      analysis_method: c.analysisMethod,
      event_ids: c.eventIds.join(","),
    },
  };
}

/**
 * A turn whose chain check has not run yet, as a page of its own: GetContext finds it from its
 * acknowledgement on. Its id is the event's; once checked, the turn is quoted by its chain's page.
 */
export function toPendingPage(turn: Turn, agentId: string, quote: string) {
  return {
    id: turn.eventId,
    sessionId: turn.sessionId,
    topic: "",
    summary: quote,
    timestamp: timestampFromDate(turn.occurredAt),
    metadata: { agent_id: agentId, status: "pending", event_ids: turn.eventId },
  };
}
