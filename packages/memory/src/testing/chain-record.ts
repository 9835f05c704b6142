import { randomUUID } from "node:crypto";
import type { Scope } from "../domain.js";
import type { ChainRecord } from "../store/chains.js";

/** A closed chain of `scope` with neutral scores, for tests that write chains directly. */
export function testChain(scope: Scope, fields: Partial<ChainRecord> = {}): ChainRecord {
  const at = fields.lastEventAt ?? new Date("2026-01-01T00:00:00Z");
  return {
    id: randomUUID(),
    scope,
    sessionId: randomUUID(),
    status: "closed",
    topic: "",
    summary: "",
    content: "",
    metadata: {},
    eventIds: [],
    workflowId: null,
    embedding: [],
    embeddingModel: "hash-idf-384",
    userVectorSum: null,
    analysisMethod: "extractive",
    entities: [],
    relations: [],
    importance: 0.5,
    density: 0.5,
    quality: 1,
    recallStrength: 1,
    accessCount: 0,
    lastAccessAt: at,
    lastStrengthenedAt: null,
    heat: null,
    promotedAt: null,
    firstEventAt: at,
    lastEventAt: at,
    ...fields,
  };
}
