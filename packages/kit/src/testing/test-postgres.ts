import { randomBytes } from "node:crypto";
import { createPostgresSql, withSearchPath } from "../sql/postgres-sql.js";
import type { Sql } from "../sql/sql.js";
import { postgresUrl } from "./servers.js";

export interface TestPostgres {
  /** Works in `schema`. */
  sql: Sql;
  /** `t_<random>`, unique per call, so concurrent test files never see each other's tables. */
  schema: string;
  /** Connection URL whose search_path is `schema`: hand it to code that takes DATABASE_URL. */
  url: string;
  /** Closes `sql` and drops the schema with everything in it; idempotent. */
  drop(): Promise<void>;
}

export interface TestPostgresOptions {
  /** Pool size; small by default, many test files share one server. */
  max?: number;
}

/** A fresh schema on the real test server (`postgresUrl()`). */
export async function createTestPostgres(options: TestPostgresOptions = {}): Promise<TestPostgres> {
  const schema = `t_${randomBytes(6).toString("hex")}`;
  const url = withSearchPath(postgresUrl(), schema);
  const sql = await createPostgresSql({ url: postgresUrl(), schema, max: options.max ?? 4 });
  let dropping: Promise<void> | undefined;
  const drop = async () => {
    await sql.close();
    // A connection of its own: the test may already have closed `sql`.
    const admin = await createPostgresSql({ url: postgresUrl(), max: 1 });
    try {
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    } finally {
      await admin.close();
    }
  };
  return {
    sql,
    schema,
    url,
    drop() {
      dropping ??= drop();
      return dropping;
    },
  };
}
