import { randomUUID } from "node:crypto";
import { createGroupCommit, type Sql, type SqlExecutor } from "@atrium/kit";
import {
  type EventRole,
  type EventSource,
  type EventType,
  joinsChains,
  type Scope,
  type StmEvent,
} from "../domain.js";

export interface NewEvent {
  sessionId: string;
  scope: Scope;
  role: EventRole;
  type: EventType;
  /** Default: the role. */
  source?: EventSource;
  content: string;
  metadata: Record<string, string>;
  timestamp: Date;
  blobUri?: string;
  blobMimeType?: string;
}

export interface InsertedEvent {
  event: StmEvent;
  /** The window entry this event replaced, when it was coalesced with it. */
  supersedes?: string;
}

interface EventRow {
  id: string;
  session_id: string;
  role: EventRole;
  type: EventType;
  /** Null for events stored before sources were recorded: they read as their role. */
  source: EventSource | null;
  content: string;
  metadata: Record<string, string>;
  blob_uri: string | null;
  blob_mime_type: string | null;
  occurred_at: Date;
  coalesced_count: number;
}

export const toStmEvent = (r: EventRow): StmEvent => ({
  id: r.id,
  sessionId: r.session_id,
  role: r.role,
  type: r.type,
  source: r.source ?? r.role,
  content: r.content,
  metadata: r.metadata,
  ...(r.blob_uri ? { blobUri: r.blob_uri } : {}),
  ...(r.blob_mime_type ? { blobMimeType: r.blob_mime_type } : {}),
  timestamp: r.occurred_at,
  coalescedCount: r.coalesced_count,
});

const COLUMNS =
  "id, session_id, role, type, source, content, metadata, blob_uri, blob_mime_type, occurred_at, coalesced_count";

/** Whether two events are repeats of one automation step stream and may be coalesced. */
function sameAutomation(a: NewEvent, b: EventRow): boolean {
  const wf = a.metadata.workflow_id;
  return (
    wf !== undefined &&
    wf !== "" &&
    b.metadata.workflow_id === wf &&
    (b.metadata.execution_id ?? "") === (a.metadata.execution_id ?? "") &&
    b.role === a.role &&
    b.type === a.type
  );
}

const INSERT_COLUMNS =
  "id, session_id, tenant_id, user_id, agent_id, role, type, source, content, metadata, blob_uri, blob_mime_type, occurred_at, coalesced_count, chain_state";
const ROW_PARAMS = 15;

function rowParams(input: NewEvent, id: string, coalescedCount: number): unknown[] {
  const chainState = joinsChains(input) ? "pending" : "skipped";
  return [
    id,
    input.sessionId,
    input.scope.tenantId,
    input.scope.userId,
    input.scope.agentId,
    input.role,
    input.type,
    input.source ?? input.role,
    input.content,
    JSON.stringify(input.metadata),
    input.blobUri ?? null,
    input.blobMimeType ?? null,
    input.timestamp,
    coalescedCount,
    chainState,
  ];
}

/**
 * Inserts one event. A repeat of the newest window event's workflow execution (same
 * workflow_id, execution_id, role and type) takes its place in the window with the count
 * carried on; the older row stays in the table, marked as superseded. Run inside a transaction
 * when the event has a workflow_id.
 */
async function writeEvent(tx: SqlExecutor, input: NewEvent): Promise<InsertedEvent> {
  const { tenantId, userId, agentId } = input.scope;
  let previous: EventRow | undefined;
  if (input.metadata.workflow_id) {
    const { rows } = await tx.query<EventRow>(
      `SELECT ${COLUMNS} FROM memory_events
       WHERE tenant_id = $1 AND user_id = $2 AND agent_id = $3 AND superseded_by IS NULL
       ORDER BY seq DESC LIMIT 1 FOR UPDATE`,
      [tenantId, userId, agentId],
    );
    if (rows[0] && sameAutomation(input, rows[0])) previous = rows[0];
  }
  const id = randomUUID();
  const { rows } = await tx.query<EventRow>(
    `INSERT INTO memory_events (${INSERT_COLUMNS})
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb, $11, $12, $13, $14, $15)
     RETURNING ${COLUMNS}`,
    rowParams(input, id, previous ? previous.coalesced_count + 1 : 1),
  );
  if (previous) {
    await tx.query("UPDATE memory_events SET superseded_by = $1 WHERE id = $2", [id, previous.id]);
  }
  return { event: toStmEvent(rows[0]), ...(previous ? { supersedes: previous.id } : {}) };
}

/**
 * Plain events (no coalescing to decide) of any number of requests in one multi-row INSERT: one
 * statement is atomic, so each request's events are all stored or none. Nothing is read back:
 * every column of a plain event is known before it is written.
 */
async function insertPlain(sql: Sql, inputs: NewEvent[]): Promise<InsertedEvent[]> {
  const params: unknown[] = [];
  const inserted: InsertedEvent[] = [];
  const values = inputs.map((input) => {
    const id = randomUUID();
    inserted.push({ event: plainEvent(input, id) });
    params.push(...rowParams(input, id, 1));
    const first = params.length - ROW_PARAMS + 1;
    const p = Array.from(
      { length: ROW_PARAMS },
      (_, i) => `$${first + i}${i === 9 ? "::jsonb" : ""}`,
    );
    return `(${p.join(", ")})`;
  });
  await sql.query(
    `INSERT INTO memory_events (${INSERT_COLUMNS}) VALUES ${values.join(", ")}`,
    params,
  );
  return inserted;
}

/** The event as `toStmEvent` reads it back from its row. */
function plainEvent(input: NewEvent, id: string): StmEvent {
  return {
    id,
    sessionId: input.sessionId,
    role: input.role,
    type: input.type,
    source: input.source ?? input.role,
    content: input.content,
    metadata: input.metadata,
    ...(input.blobUri ? { blobUri: input.blobUri } : {}),
    ...(input.blobMimeType ? { blobMimeType: input.blobMimeType } : {}),
    timestamp: input.timestamp,
    coalescedCount: 1,
  };
}

export interface EventStoreOptions {
  /** Requests whose events one INSERT may carry (group commit); default 200. */
  maxRequestsPerInsert?: number;
}

async function insertAllIn(tx: SqlExecutor, inputs: NewEvent[]): Promise<InsertedEvent[]> {
  const out: InsertedEvent[] = [];
  for (const input of inputs) out.push(await writeEvent(tx, input));
  return out;
}

/** Durable STM events: the source of truth the cache window is rebuilt from. */
export function createEventStore(sql: Sql, options: EventStoreOptions = {}) {
  const plainInserts = createGroupCommit((inputs: NewEvent[]) => insertPlain(sql, inputs), {
    maxRequests: options.maxRequestsPerInsert,
  });
  return {
    /** One event, coalesced with its predecessor when it repeats a workflow step (writeEvent). */
    async insert(input: NewEvent): Promise<InsertedEvent> {
      // Only a possible coalescing needs the read-then-write transaction; a plain event joins
      // the next group INSERT.
      if (input.metadata.workflow_id) return sql.transaction((tx) => writeEvent(tx, input));
      const [inserted] = await plainInserts.write([input]);
      return inserted;
    },

    /** Several events atomically, in order: all are stored or none. */
    async insertAll(inputs: NewEvent[]): Promise<InsertedEvent[]> {
      if (inputs.some((input) => input.metadata.workflow_id)) {
        return sql.transaction((tx) => insertAllIn(tx, inputs));
      }
      return plainInserts.write(inputs);
    },

    /** Several events, in order, inside the caller's transaction (an idempotent write's). */
    insertAllIn,

    /** The newest `limit` window events of a scope, newest first. */
    async newest(scope: Scope, limit: number): Promise<StmEvent[]> {
      const { rows } = await sql.query<EventRow>(
        `SELECT ${COLUMNS} FROM memory_events
         WHERE tenant_id = $1 AND user_id = $2 AND agent_id = $3 AND superseded_by IS NULL
         ORDER BY seq DESC LIMIT $4`,
        [scope.tenantId, scope.userId, scope.agentId, limit],
      );
      return rows.map(toStmEvent);
    },

    /** Messages not yet through the chain check, oldest first. */
    async pending(scope: Scope, limit: number): Promise<StmEvent[]> {
      const { rows } = await sql.query<EventRow>(
        `SELECT ${COLUMNS} FROM memory_events
         WHERE tenant_id = $1 AND user_id = $2 AND agent_id = $3 AND chain_state = 'pending'
         ORDER BY seq LIMIT $4`,
        [scope.tenantId, scope.userId, scope.agentId, limit],
      );
      return rows.map(toStmEvent);
    },

    /**
     * Marks messages as through the chain check and, in the same statement, counts them into
     * their users' lexical statistics (BM25's document frequencies): a message leaves 'pending'
     * once, so it is counted once however often a check is retried.
     */
    async markChained(ids: string[], db: SqlExecutor = sql): Promise<void> {
      if (ids.length === 0) return;
      await db.query(
        `WITH done AS (
           UPDATE memory_events SET chain_state = 'done'
           WHERE id = ANY($1::uuid[]) AND chain_state = 'pending'
           RETURNING tenant_id, user_id, search_vector
         ), indexed AS (
           SELECT tenant_id, user_id, search_vector FROM done WHERE search_vector IS NOT NULL
         ), lexemes AS (
           INSERT INTO memory_lexicon (tenant_id, user_id, lexeme, documents)
           SELECT i.tenant_id, i.user_id, t.lexeme, count(*)
           FROM indexed i, unnest(tsvector_to_array(i.search_vector)) AS t(lexeme)
           GROUP BY i.tenant_id, i.user_id, t.lexeme
           -- One lock order for every writer: checks of two agents of one user never deadlock.
           ORDER BY i.tenant_id, i.user_id, t.lexeme
           ON CONFLICT (tenant_id, user_id, lexeme)
           DO UPDATE SET documents = memory_lexicon.documents + EXCLUDED.documents
         )
         INSERT INTO memory_lexicon_totals (tenant_id, user_id, documents, lexemes)
         SELECT tenant_id, user_id, count(*), sum(length(search_vector)) FROM indexed
         GROUP BY tenant_id, user_id
         ON CONFLICT (tenant_id, user_id) DO UPDATE SET
           documents = memory_lexicon_totals.documents + EXCLUDED.documents,
           lexemes = memory_lexicon_totals.lexemes + EXCLUDED.lexemes`,
        [ids],
      );
    },

    /** Records which chain the messages are in now (retrieval's way from a turn to its page). */
    async placeInChain(db: SqlExecutor, chainId: string, ids: string[]): Promise<void> {
      if (ids.length === 0) return;
      await db.query(
        `UPDATE memory_events SET chain_id = $1
         WHERE id = ANY($2::uuid[]) AND chain_id IS DISTINCT FROM $1`,
        [chainId, ids],
      );
    },

    /** Scopes with messages waiting, for the sweep after a restart. */
    async scopesWithPending(): Promise<Scope[]> {
      const { rows } = await sql.query<{ tenant_id: string; user_id: string; agent_id: string }>(
        `SELECT DISTINCT tenant_id, user_id, agent_id FROM memory_events WHERE chain_state = 'pending'`,
      );
      return rows.map((r) => ({ tenantId: r.tenant_id, userId: r.user_id, agentId: r.agent_id }));
    },
  };
}

export type EventStore = ReturnType<typeof createEventStore>;
