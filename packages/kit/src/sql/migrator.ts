import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Sql, SqlExecutor, SqlLogger } from "./sql.js";

export type MigrationLogger = Pick<SqlLogger, "info">;

export interface RunMigrationsOptions {
  /**
   * Directory of `NNNN_name.sql` files. A deployment that keeps them elsewhere
   * (`MIGRATIONS_DIR`) relocates them by passing that directory here.
   */
  dir: string;
  /** One per service (`memory`, `broker`), so services sharing a database keep apart histories. */
  namespace: string;
  logger?: MigrationLogger;
}

const migrationFilePattern = /^\d{4}_[\w-]+\.sql$/;

// One fixed key ("atri", "umig" in ASCII) for every service and version: all migrators of a
// database queue on it, including the ledger table's own creation.
const takeMigrationLock = "SELECT pg_advisory_xact_lock(1635021417, 1970104679)";

const createLedger = `CREATE TABLE IF NOT EXISTS atrium_migrations (
  namespace text NOT NULL,
  name text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (namespace, name)
)`;

async function listMigrationFiles(dir: string): Promise<string[]> {
  const sqlFiles = (await readdir(dir)).filter((name) => name.endsWith(".sql"));
  const misnamed = sqlFiles.find((name) => !migrationFilePattern.test(name));
  if (misnamed) {
    throw new Error(`migration file ${join(dir, misnamed)} is not named NNNN_name.sql`);
  }
  // Four-digit prefixes make the plain code-unit order the numeric order.
  return sqlFiles.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

async function appliedNames(sql: Sql, namespace: string): Promise<Set<string>> {
  return sql.transaction(async (tx) => {
    await tx.query(takeMigrationLock);
    await tx.query(createLedger);
    const { rows } = await tx.query<{ name: string }>(
      "SELECT name FROM atrium_migrations WHERE namespace = $1",
      [namespace],
    );
    return new Set(rows.map((row) => row.name));
  });
}

async function isApplied(tx: SqlExecutor, namespace: string, name: string): Promise<boolean> {
  const { rowCount } = await tx.query(
    "SELECT 1 FROM atrium_migrations WHERE namespace = $1 AND name = $2",
    [namespace, name],
  );
  return rowCount > 0;
}

/** Applies one file in its own transaction; false when another instance got there first. */
async function applyMigration(
  sql: Sql,
  namespace: string,
  name: string,
  text: string,
): Promise<boolean> {
  try {
    return await sql.transaction(async (tx) => {
      await tx.query(takeMigrationLock);
      if (await isApplied(tx, namespace, name)) return false;
      await tx.query(text);
      await tx.query("INSERT INTO atrium_migrations (namespace, name) VALUES ($1, $2)", [
        namespace,
        name,
      ]);
      return true;
    });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`migration ${name} (${namespace}) failed: ${reason}`, { cause: error });
  }
}

/**
 * Applies the files of `dir` not yet in the `atrium_migrations` ledger, in file-name order,
 * each in its own transaction under an advisory lock, so instances starting together apply
 * every file exactly once. Files must not contain their own BEGIN/COMMIT, nor statements that
 * refuse to run in a transaction (CREATE INDEX CONCURRENTLY). Returns the file names applied.
 */
export async function runMigrations(sql: Sql, options: RunMigrationsOptions): Promise<string[]> {
  const { dir, namespace, logger } = options;
  const files = await listMigrationFiles(dir);
  const done = await appliedNames(sql, namespace);
  const applied: string[] = [];
  for (const name of files) {
    if (done.has(name)) continue;
    const text = await readFile(join(dir, name), "utf8");
    if (await applyMigration(sql, namespace, name, text)) {
      applied.push(name);
      logger?.info({ namespace, migration: name }, "migration applied");
    }
  }
  return applied;
}
