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

/** PostgreSQL when a database URL is configured, else a file-backed PGlite. */
export async function createSql(options: CreateSqlOptions): Promise<Sql> {
  if (!namePattern.test(options.name)) {
    throw new Error(
      `invalid database name "${options.name}": use lower-case letters, digits, - and _`,
    );
  }
  if (options.databaseUrl) {
    return createPostgresSql({
      url: options.databaseUrl,
      max: options.max,
      logger: options.logger,
    });
  }
  return createPgliteSql({ dataDir: join(options.dataDir, options.name) });
}
