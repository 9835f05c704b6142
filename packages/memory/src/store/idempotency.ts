import { invalidArgument, type Sql, type SqlExecutor } from "@atrium/kit";

/** The header (REST) and metadata key (gRPC) that carries a client's idempotency key. */
export const IDEMPOTENCY_HEADER = "idempotency-key";

const MAX_KEY_LENGTH = 255;

/** How long a key is remembered: a retry later than this stores the write again. */
export const IDEMPOTENCY_RETENTION_HOURS = 24;

export interface IdempotencyScope {
  tenantId: string;
  operation: string;
  key: string;
}

/** The caller's idempotency key, if any; refused when it is empty or too long. */
export function idempotencyKeyOf(headers: Headers): string | undefined {
  const key = headers.get(IDEMPOTENCY_HEADER);
  if (key === null) return undefined;
  const trimmed = key.trim();
  if (trimmed === "" || trimmed.length > MAX_KEY_LENGTH) {
    throw invalidArgument(`${IDEMPOTENCY_HEADER} must be 1 to ${MAX_KEY_LENGTH} characters`);
  }
  return trimmed;
}

/**
 * Runs a write once per key, across instances: the key is claimed by a row under a primary key
 * in the write's own transaction. A concurrent request with the same key waits on that row and,
 * once the first commits, reads its response; if the first rolls back, the second claims the key
 * and writes.
 */
export function createIdempotencyStore(sql: Sql) {
  return {
    async once<Response, Extra>(
      scope: IdempotencyScope,
      write: (tx: SqlExecutor) => Promise<{
        response: Response;
        extra: Extra /** Erasing one forgets the key. */;
        eventIds?: string[];
      }>,
    ): Promise<{ response: Response; extra?: Extra }> {
      const params = [scope.tenantId, scope.operation, scope.key];
      return sql.transaction(async (tx) => {
        const claimed = await tx.query(
          `INSERT INTO memory_idempotency (tenant_id, operation, key) VALUES ($1, $2, $3)
           ON CONFLICT DO NOTHING`,
          params,
        );
        if (claimed.rowCount === 0) {
          const { rows } = await tx.query<{ response: Response }>(
            "SELECT response FROM memory_idempotency WHERE tenant_id = $1 AND operation = $2 AND key = $3",
            params,
          );
          return { response: rows[0].response };
        }
        const result = await write(tx);
        await tx.query(
          `UPDATE memory_idempotency SET response = $4::jsonb, event_ids = $5::uuid[]
           WHERE tenant_id = $1 AND operation = $2 AND key = $3`,
          [...params, JSON.stringify(result.response), result.eventIds ?? []],
        );
        return result;
      });
    },

    /** Forgets keys past their retention. */
    async purge(): Promise<void> {
      await sql.query(
        `DELETE FROM memory_idempotency WHERE created_at < now() - make_interval(hours => $1)`,
        [IDEMPOTENCY_RETENTION_HOURS],
      );
    },
  };
}

export type IdempotencyStore = ReturnType<typeof createIdempotencyStore>;
