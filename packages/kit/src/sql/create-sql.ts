import { join } from "node:path";
import { createPgliteSql } from "./pglite-sql.js";
import { createPostgresSql } from "./postgres-sql.js";
import type { Sql, SqlLogger } from "./sql.js";

export interface CreateSqlOptions {
  /** `DATABASE_URL`; when set, PostgreSQL is used and `dataDir` is ignored. */
  databaseUrl?: string;
  /** `ATRIUM_DATA_DIR`; the embedded database lives in `<dataDir>/<name>`. */
  dataDir: string;
  /** The service's own database directory name, e.g. `memory`, so services never share one. */
  name: string;
  /** PostgreSQL pool size. */
  max?: number;
  logger?: SqlLogger;
}

const namePattern = /^[a-z0-9][a-z0-9_-]*$/;

/** Where a URL points, without its user or password. */
function describeServer(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || "5432"}${parsed.pathname}`;
  } catch {
    return "an unparsable address";
  }
}

/** Fails start-up with one line naming the variable when the server cannot be reached. */
async function reachable(sql: Sql, databaseUrl: string): Promise<void> {
  try {
    await sql.ping();
  } catch (error) {
    await sql.close();
    const cause = (error as { cause?: unknown }).cause ?? error;
    const reason = (cause as Error).message || (cause as { code?: string }).code || "unknown";
    throw new Error(
      `DATABASE_URL: PostgreSQL at ${describeServer(databaseUrl)} cannot be reached (${reason})`,
      { cause: error },
    );
  }
}

/** PostgreSQL when a database URL is configured, else a file-backed PGlite. */
export async function createSql(options: CreateSqlOptions): Promise<Sql> {
  if (!namePattern.test(options.name)) {
    throw new Error(
      `invalid database name "${options.name}": use lower-case letters, digits, - and _`,
    );
  }
  if (options.databaseUrl) {
    const sql = await createPostgresSql({
      url: options.databaseUrl,
      max: options.max,
      logger: options.logger,
    });
    await reachable(sql, options.databaseUrl);
    return sql;
  }
  return createPgliteSql({ dataDir: join(options.dataDir, options.name) });
}
