/** Rows and count of one statement. */
export interface SqlResult<Row> {
  rows: Row[];
  /** Rows returned or affected; 0 for statements that have neither (DDL). */
  rowCount: number;
}

/** What can run statements: the pool itself or one transaction. */
export interface SqlExecutor {
  /**
   * Runs one statement with `$1…` parameters. Without parameters `text` may hold several
   * statements (a migration file); the result is then the last statement's.
   *
   * Both adapters decode values the same way: `int8` as a number (a bigint beyond 2^53),
   * `numeric` as a string, `jsonb` as parsed JSON, `timestamptz` as a Date, arrays as arrays.
   * Pass a JSON array bound for `jsonb` as `JSON.stringify(value)`: `pg` would send a plain JS
   * array as a Postgres array literal.
   */
  query<Row = Record<string, unknown>>(text: string, params?: unknown[]): Promise<SqlResult<Row>>;
}

/**
 * The SQL port. PostgreSQL (`pg`) and PGlite implement it; both speak the same dialect, so
 * there is one schema and one set of migrations.
 */
export interface Sql extends SqlExecutor {
  readonly dialect: "postgres" | "pglite";
  /**
   * Runs `fn` in one transaction: committed when it resolves, rolled back when it throws.
   * Inside `fn`, use only `tx`: PGlite has a single connection, so awaiting the outer `Sql`
   * there waits for this very transaction to end (PGlite's adapter fails it after 10 s, naming
   * the mistake).
   */
  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  /** True when the pgvector extension can be used (always for PGlite). */
  hasVector(): Promise<boolean>;
  /** Liveness check used by health endpoints. */
  ping(): Promise<void>;
  /** Releases connections (or the embedded database); idempotent. */
  close(): Promise<void>;
}

/** The part of a pino logger the SQL layer writes to. */
export interface SqlLogger {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
}
