import pg from "pg";
import { traceQuery } from "../observability/tracing.js";
import { asDatabaseUnavailable } from "./connection-errors.js";
import type { Sql, SqlExecutor, SqlLogger, SqlResult } from "./sql.js";
import { createTransactionScope } from "./transaction-scope.js";

export interface PostgresSqlOptions {
  /** `postgres://user:pass@host:port/db`; query parameters such as `options` are honoured. */
  url: string;
  /** Pool size; `pg`'s default (10) when absent. */
  max?: number;
  /**
   * Schema to work in: created when missing and put first on the search_path of every pooled
   * connection (followed by `public`, where extensions usually live).
   */
  schema?: string;
  /** Receives errors of idle pooled connections, which the pool then discards. */
  logger?: SqlLogger;
  /** Longest wait for a new connection before the call fails as Unavailable (default 5 s). */
  connectTimeoutMs?: number;
}

const schemaPattern = /^[a-z_][a-z0-9_]{0,62}$/;

/** Returns `url` with a startup option that puts `schema` first on the search_path. */
export function withSearchPath(url: string, schema: string): string {
  if (!schemaPattern.test(schema)) {
    throw new Error(`invalid schema name "${schema}": use lower-case letters, digits and _`);
  }
  const parsed = new URL(url);
  const options = [parsed.searchParams.get("options"), `-c search_path=${schema},public`];
  parsed.searchParams.set("options", options.filter(Boolean).join(" "));
  return parsed.toString();
}

const int8 = 20;

/** PGlite's int8 decoding, so both adapters hand callers the same values. */
function parseInt8(text: string): number | bigint {
  const value = BigInt(text);
  return value >= Number.MIN_SAFE_INTEGER && value <= Number.MAX_SAFE_INTEGER
    ? Number(value)
    : value;
}

const types: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === int8 && format !== "binary"
      ? parseInt8
      : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig["getTypeParser"],
};

/**
 * Runs one query on a checked-out client. A failure is the database being away when its code says
 * so, or when the client's connection is gone (`lost`): pg gives a connection closed under a
 * query, or a client no longer queryable, no code, so the socket's state tells, not the text.
 */
async function run<Row>(
  client: pg.PoolClient,
  text: string,
  params: unknown[] | undefined,
  lost: () => boolean,
): Promise<SqlResult<Row>> {
  let result: pg.QueryResult | pg.QueryResult[];
  try {
    result = (await traceQuery(text, () => client.query(text, params))) as
      | pg.QueryResult
      | pg.QueryResult[];
  } catch (error) {
    throw asDatabaseUnavailable(error, lost() || client.connection.stream.destroyed);
  }
  // A parameterless multi-statement text yields one result per statement.
  const last = Array.isArray(result) ? result[result.length - 1] : result;
  return { rows: (last?.rows ?? []) as Row[], rowCount: last?.rowCount ?? 0 };
}

/**
 * A client from the pool for `use`, released after it; the pool destroys it when its connection
 * failed.
 * Acquiring fails only on the way to the database (no connection made in time, the connection
 * closed during start-up, the pool ended) unless PostgreSQL answered with an error of its own.
 */
async function withClient<T>(
  pool: pg.Pool,
  use: (client: pg.PoolClient, lost: () => boolean, discard: (error: Error) => void) => Promise<T>,
): Promise<T> {
  const client = await pool.connect().catch((error) => {
    throw asDatabaseUnavailable(error, !(error instanceof pg.DatabaseError));
  });
  let broken: Error | undefined;
  // The pool listens for errors of idle clients only: a connection lost while checked out
  // would otherwise be an uncaught 'error' event. The failing query rejects on its own.
  const onLost = (error: Error) => {
    broken = error;
  };
  client.on("error", onLost);
  try {
    return await use(client, () => broken !== undefined, onLost);
  } finally {
    client.off("error", onLost);
    client.release(broken);
  }
}

const duplicateSchemaCodes = new Set(["42P06", "23505"]);

async function ensureSchema(pool: pg.Pool, schema: string): Promise<void> {
  try {
    await pool.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  } catch (error) {
    // Two instances creating the same schema at once: the loser sees a duplicate; both are fine.
    if (!duplicateSchemaCodes.has((error as { code?: string }).code ?? "")) throw error;
  }
}

/** The SQL port on PostgreSQL through a `pg` pool; resolves once the schema is usable. */
export async function createPostgresSql(options: PostgresSqlOptions): Promise<Sql> {
  const url = options.schema ? withSearchPath(options.url, options.schema) : options.url;
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max,
    types,
    // pg waits forever by default: a database that stops answering would hang every caller.
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
  });
  pool.on("error", (error) => {
    options.logger?.warn({ err: error }, "idle PostgreSQL connection failed; pool discarded it");
  });
  if (options.schema) {
    try {
      await ensureSchema(pool, options.schema);
    } catch (error) {
      await pool.end();
      throw error;
    }
  }

  let closing: Promise<void> | undefined;
  const query = <Row>(text: string, params?: unknown[]) =>
    withClient(pool, (client, lost) => run<Row>(client, text, params, lost));

  return {
    dialect: "postgres",

    query,

    transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
      return withClient(pool, async (client, lost, discard) => {
        const scope = createTransactionScope((text, params) => run(client, text, params, lost));
        try {
          await run(client, "BEGIN", undefined, lost);
          const value = await fn(scope.tx);
          scope.end();
          await run(client, "COMMIT", undefined, lost);
          return value;
        } catch (error) {
          scope.end();
          try {
            await client.query("ROLLBACK");
          } catch (rollbackError) {
            // A connection that cannot roll back must not return to the pool mid-transaction.
            discard(rollbackError as Error);
          }
          throw error;
        }
      });
    },

    async hasVector() {
      const { rows } = await query<{ available: boolean }>(
        "SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector') AS available",
      );
      return rows[0]?.available === true;
    },

    async ping() {
      await query("SELECT 1");
    },

    close() {
      closing ??= pool.end();
      return closing;
    },
  };
}
