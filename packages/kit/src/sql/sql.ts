/** Rows and count of one statement. */
export interface SqlResult<Row> {
  rows: Row[];
  rowCount: number;
}

/** What can run statements: the pool itself or one transaction. */
export interface SqlExecutor {
  query<Row = Record<string, unknown>>(text: string, params?: unknown[]): Promise<SqlResult<Row>>;
}

/**
 * The SQL port. PostgreSQL (`pg`) and PGlite implement it; both speak the same dialect, so
 * there is one schema and one set of migrations.
 */
export interface Sql extends SqlExecutor {
  readonly dialect: "postgres" | "pglite";
  /** Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  /** True when the pgvector extension can be used (always for PGlite). */
  hasVector(): Promise<boolean>;
  /** Liveness check used by health endpoints. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
