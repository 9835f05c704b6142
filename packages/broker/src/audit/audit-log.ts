import { randomUUID } from "node:crypto";
import { AtriumError, Code, createGroupCommit, type SqlExecutor } from "@atrium/kit";

export const AUDIT_EVENT_TYPES = [
  "provider.created",
  "provider.updated",
  "provider.deleted",
  "connection.created",
  "connection.revoked",
  "token.retrieved",
  "token.exchange_failed",
  "token.storage_failed",
  "token.refresh_fatal",
  "agent.created",
  "agent.disabled",
  "webhook.created",
  "webhook.updated",
  "webhook.deleted",
  "webhook.secret_rotated",
  "webhook.redelivered",
] as const;
export type AuditEventType = (typeof AUDIT_EVENT_TYPES)[number];

/** Who made the request, as recorded on every event. */
export interface CallerContext {
  callerIp: string;
  userAgent: string;
}

export const SYSTEM_CALLER: CallerContext = {
  callerIp: "",
  userAgent: "atrium-broker/refresh-loop",
};

export interface AuditEventInput {
  eventType: AuditEventType;
  resourceId: string;
  data: Record<string, unknown>;
  caller: CallerContext;
}

export interface AuditEventRow {
  id: string;
  event_type: string;
  resource_id: string;
  caller_ip: string;
  user_agent: string;
  data: Record<string, unknown>;
  created_at: Date;
}

/** Written with the executor of the change it records, so both commit or neither does. */
export async function writeAuditEvent(tx: SqlExecutor, event: AuditEventInput): Promise<void> {
  await insertAuditEvents(tx, [event]);
}

async function insertAuditEvents(sql: SqlExecutor, events: AuditEventInput[]): Promise<void> {
  const params: unknown[] = [];
  const values = events.map((event) => {
    params.push(
      randomUUID(),
      event.eventType,
      event.resourceId,
      event.caller.callerIp,
      event.caller.userAgent,
      JSON.stringify(event.data),
    );
    const first = params.length - 5;
    return `($${first}, $${first + 1}, $${first + 2}, $${first + 3}, $${first + 4}, $${first + 5})`;
  });
  await sql.query(
    `INSERT INTO audit_events (id, event_type, resource_id, caller_ip, user_agent, data)
     VALUES ${values.join(", ")}`,
    params,
  );
}

export interface AuditWriter {
  /** Resolves once the event is committed: callers serve what it records only after that. */
  write(event: AuditEventInput): Promise<void>;
}

/**
 * Audit events that record no change of their own (a token read): concurrent requests' events
 * share one INSERT and one commit (group commit), and each caller still waits for its row.
 */
export function createAuditWriter(sql: SqlExecutor): AuditWriter {
  const inserts = createGroupCommit(async (events: AuditEventInput[]) => {
    await insertAuditEvents(sql, events);
    return events.map(() => undefined);
  });
  return {
    async write(event) {
      await inserts.write([event]);
    },
  };
}

export interface AuditQuery {
  eventType?: string;
  resourceId?: string;
  since?: string;
  until?: string;
  limit?: number;
  offset?: number;
}

export const AUDIT_DEFAULT_LIMIT = 50;
export const AUDIT_MAX_LIMIT = 500;

export interface AuditPage {
  events: AuditEventRow[];
  total: number;
  limit: number;
  offset: number;
}

function invalid(message: string): AtriumError {
  return new AtriumError(Code.InvalidArgument, message);
}

function parseInstant(name: string, value: string): Date {
  // ISO 8601 with a date; Date.parse alone would also take "March 3".
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(Date.parse(value))) {
    throw invalid(`${name} must be an ISO 8601 time`);
  }
  return new Date(value);
}

/** Newest first; filters combine with AND. */
export async function queryAuditEvents(sql: SqlExecutor, query: AuditQuery): Promise<AuditPage> {
  const limit = query.limit ?? AUDIT_DEFAULT_LIMIT;
  const offset = query.offset ?? 0;
  if (!Number.isInteger(limit) || limit < 1 || limit > AUDIT_MAX_LIMIT) {
    throw invalid(`limit must be between 1 and ${AUDIT_MAX_LIMIT}`);
  }
  if (!Number.isInteger(offset) || offset < 0) throw invalid("offset must be 0 or more");
  const where: string[] = [];
  const params: unknown[] = [];
  const add = (clause: string, value: unknown) => {
    params.push(value);
    where.push(clause.replace("?", `$${params.length}`));
  };
  if (query.eventType) add("event_type = ?", query.eventType);
  if (query.resourceId) add("resource_id = ?", query.resourceId);
  if (query.since) add("created_at > ?", parseInstant("since", query.since));
  if (query.until) add("created_at < ?", parseInstant("until", query.until));
  const filter = where.length ? `WHERE ${where.join(" AND ")}` : "";
  const total = await sql.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM audit_events ${filter}`,
    params,
  );
  const page = await sql.query<AuditEventRow>(
    `SELECT id, event_type, resource_id, caller_ip, user_agent, data, created_at
       FROM audit_events ${filter}
      ORDER BY created_at DESC, id DESC
      LIMIT ${limit} OFFSET ${offset}`,
    params,
  );
  return { events: page.rows, total: total.rows[0]?.n ?? 0, limit, offset };
}
