import type { Sql } from "@atrium/kit";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { extractEntities } from "../chains/text-analysis.js";
import type { Embedder } from "../embeddings/embedder.js";
import { cosineSimilarity } from "../embeddings/vectors.js";
import { type EntityFact, type EntityRecord, graphStore } from "../store/graph.js";

const ENTITY_FACTS = 5;

function describeFacts(entity: EntityRecord, facts: EntityFact[]): string {
  const relations = facts.map((f) =>
    f.direction === "out" ? `${f.relation} ${f.other}` : `${f.other} ${f.relation} ${entity.name}`,
  );
  const parts = [`${entity.name} (${entity.type})`];
  if (relations.length > 0) parts.push(relations.join("; "));
  parts.push(`mentioned in ${entity.mentions} conversation${entity.mentions === 1 ? "" : "s"}`);
  if (entity.community !== null) {
    parts.push(
      `community ${entity.community}, bridges ${entity.bridgeScore ?? 0} other communities`,
    );
  }
  return parts.join(". ");
}

/**
 * SearchMemory's long-term graph part: the entities a query names, each as one readable fact
 * sheet, scored by similarity to the query.
 */
export function createEntityFacts({ sql, embedder }: { sql: Sql; embedder: Embedder }) {
  return async function entityFacts(owner: { tenantId: string; userId: string }, query: string) {
    const mentioned = await graphStore.mentionedIn(sql, owner, query, ENTITY_FACTS);
    // compromise may spot a name the plain match missed (different spacing, possessive).
    for (const e of extractEntities(query)) {
      if (mentioned.length >= ENTITY_FACTS) break;
      for (const found of await graphStore.mentionedIn(sql, owner, e.name, 1)) {
        if (!mentioned.some((m) => m.id === found.id)) mentioned.push(found);
      }
    }
    if (mentioned.length === 0) return [];
    const contents = await Promise.all(
      mentioned.map(async (entity) =>
        describeFacts(entity, await graphStore.facts(sql, entity.id, 10)),
      ),
    );
    const [queryVector, ...vectors] = await embedder.embed([query, ...contents]);
    return mentioned.map((entity, i) => ({
      content: contents[i],
      similarityScore: cosineSimilarity(queryVector, vectors[i]),
      sourceType: "entity",
      sourceId: entity.id,
      timestamp: timestampFromDate(entity.updatedAt),
    }));
  };
}
