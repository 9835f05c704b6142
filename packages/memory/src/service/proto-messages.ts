import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { StmEvent } from "../domain.js";
import type { ChainRecord } from "../store/chains.js";

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
