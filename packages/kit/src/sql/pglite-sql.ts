import { mkdir } from "node:fs/promises";
import { PGlite, type Results } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite-pgvector";
import type { Sql, SqlExecutor, SqlResult } from "./sql.js";
import { createTransactionScope } from "./transaction-scope.js";

export interface PgliteSqlOptions {
  /** Directory holding the database files; absent: in memory, gone at `close()`. */
  dataDir?: string;
}

/** What both PGlite and one of its transactions can run. */
interface PgliteRunner {
  query<Row>(text: string, params?: unknown[]): Promise<Results<Row>>;
  exec(text: string): Promise<Results[]>;
}

function toSqlResult<Row>(result: Results<Row> | undefined): SqlResult<Row> {
  return { rows: result?.rows ?? [], rowCount: result?.rowCount ?? 0 };
}

async function run<Row>(
  runner: PgliteRunner,
  text: string,
  params?: unknown[],
): Promise<SqlResult<Row>> {
  if (params && params.length > 0) return toSqlResult(await runner.query<Row>(text, params));
  // `query` prepares its text, which allows one statement only; `exec` takes a whole script.
  const results = await runner.exec(text);
  return toSqlResult(results[results.length - 1] as Results<Row> | undefined);
}

/**
 * The SQL port on PGlite (Postgres compiled to WASM) with pgvector. PGlite has one connection:
 * its `query` and `transaction` share one lock, so a statement issued while a transaction runs
 * waits for it to end instead of landing inside it.
 */
export async function createPgliteSql(options: PgliteSqlOptions = {}): Promise<Sql> {
  if (options.dataDir) await mkdir(options.dataDir, { recursive: true });
  const db = await PGlite.create({ dataDir: options.dataDir, extensions: { vector } });
  try {
    await db.exec("CREATE EXTENSION IF NOT EXISTS vector");
  } catch (error) {
    await db.close();
    throw error;
  }

  let closing: Promise<void> | undefined;

  return {
    dialect: "pglite",

    query<Row>(text: string, params?: unknown[]) {
      return run<Row>(db, text, params);
    },

    transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
      return db.transaction(async (pgliteTx) => {
        const scope = createTransactionScope((text, params) => run(pgliteTx, text, params));
        try {
          return await fn(scope.tx);
        } finally {
          scope.end();
        }
      });
    },

    async hasVector() {
      return true;
    },

    async ping() {
      await db.query("SELECT 1");
    },

    close() {
      closing ??= db.close();
      return closing;
    },
  };
}
