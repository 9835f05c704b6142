import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, type TestContext, test } from "node:test";
import { needsServer } from "../testing/servers.js";
import { createTestPostgres } from "../testing/test-postgres.js";
import { migrateAtBoot } from "./migrate-at-boot.js";
import { type MigrationLogger, runMigrations } from "./migrator.js";
import { createPgliteSql } from "./pglite-sql.js";
import { createPostgresSql } from "./postgres-sql.js";
import type { Sql } from "./sql.js";

interface Database {
  sql: Sql;
  /** Opens another instance on the same database, as a second service replica would. */
  replica(): Promise<Sql>;
  dispose(): Promise<void>;
}

interface Adapter {
  name: "pglite" | "postgres";
  open(): Promise<Database>;
}

const adapters: Adapter[] = [
  {
    name: "pglite",
    async open() {
      const sql = await createPgliteSql();
      // PGlite is one process's database: replicas share the one instance.
      const replica = async (): Promise<Sql> => ({ ...sql, close: async () => {} });
      return { sql, replica, dispose: () => sql.close() };
    },
  },
  {
    name: "postgres",
    async open() {
      const db = await createTestPostgres();
      return {
        sql: db.sql,
        replica: () => createPostgresSql({ url: db.url, max: 2 }),
        dispose: db.drop,
      };
    },
  },
];

async function writeMigrations(t: TestContext, files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "atrium-migrations-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  return dir;
}

function captureLogger(): MigrationLogger & { lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    info(fields, message) {
      lines.push(`${message} ${JSON.stringify(fields)}`);
    },
  };
}

async function ledger(sql: Sql, namespace: string): Promise<string[]> {
  const exists = await sql.query("SELECT to_regclass('atrium_migrations') IS NOT NULL AS e");
  if (exists.rows[0]?.e !== true) return [];
  const { rows } = await sql.query<{ name: string }>(
    "SELECT name FROM atrium_migrations WHERE namespace = $1 ORDER BY name",
    [namespace],
  );
  return rows.map((row) => row.name);
}

async function tableExists(sql: Sql, table: string): Promise<boolean> {
  const { rows } = await sql.query<{ e: boolean }>("SELECT to_regclass($1) IS NOT NULL AS e", [
    table,
  ]);
  return rows[0]!.e;
}

function forget(t: TestContext, sql: Sql, namespace: string, tables: string[]) {
  t.after(async () => {
    for (const table of tables) await sql.query(`DROP TABLE IF EXISTS ${table}`);
    if ((await ledger(sql, namespace)).length > 0) {
      await sql.query("DELETE FROM atrium_migrations WHERE namespace = $1", [namespace]);
    }
  });
}

for (const adapter of adapters) {
  describe(`migrator (${adapter.name})`, () => {
    let opened: Promise<Database> | undefined;
    after(async () => {
      if (opened) await (await opened).dispose();
    });

    async function open(t: TestContext): Promise<Database | undefined> {
      if (adapter.name === "postgres" && !(await needsServer(t, "postgres"))) return undefined;
      opened ??= adapter.open();
      return opened;
    }

    test("applies files in name order, records them, and a second run applies nothing", async (t) => {
      const db = await open(t);
      if (!db) return;
      const { sql } = db;
      forget(t, sql, "ordering", ["mig_items"]);
      const dir = await writeMigrations(t, {
        "0002_seed.sql": "INSERT INTO mig_items VALUES (1);\nINSERT INTO mig_items VALUES (2);",
        "0001_items.sql": "CREATE TABLE mig_items (id int PRIMARY KEY);",
        "README.md": "not a migration",
      });
      const logger = captureLogger();

      const applied = await runMigrations(sql, { dir, namespace: "ordering", logger });
      assert.deepEqual(applied, ["0001_items.sql", "0002_seed.sql"]);
      assert.deepEqual(await ledger(sql, "ordering"), applied);
      const stamps = await sql.query<{ applied_at: Date }>(
        "SELECT applied_at FROM atrium_migrations WHERE namespace = 'ordering'",
      );
      assert.ok(stamps.rows.every((row) => row.applied_at instanceof Date));
      assert.equal(logger.lines.length, 2);
      assert.match(logger.lines[0]!, /migration applied.*0001_items\.sql/);

      assert.deepEqual(await runMigrations(sql, { dir, namespace: "ordering", logger }), []);
      const { rows } = await sql.query("SELECT id FROM mig_items ORDER BY id");
      assert.deepEqual(rows, [{ id: 1 }, { id: 2 }]);
      assert.equal(logger.lines.length, 2);
    });

    test("replicas migrating at the same moment apply each file exactly once", async (t) => {
      const db = await open(t);
      if (!db) return;
      forget(t, db.sql, "race", ["mig_race"]);
      const dir = await writeMigrations(t, {
        "0001_table.sql": "CREATE TABLE mig_race (id int PRIMARY KEY);",
        "0002_first.sql": "INSERT INTO mig_race VALUES (1), (2);",
        "0003_second.sql": "INSERT INTO mig_race VALUES (3);",
      });
      const replicas = await Promise.all([db.replica(), db.replica()]);
      t.after(() => Promise.all(replicas.map((replica) => replica.close())));

      const results = await Promise.all(
        replicas.map((replica) => runMigrations(replica, { dir, namespace: "race" })),
      );
      assert.deepEqual(results.flat().sort(), [
        "0001_table.sql",
        "0002_first.sql",
        "0003_second.sql",
      ]);
      assert.deepEqual(await ledger(db.sql, "race"), results.flat().sort());
      const { rows } = await db.sql.query("SELECT id FROM mig_race ORDER BY id");
      assert.deepEqual(rows, [{ id: 1 }, { id: 2 }, { id: 3 }]);
    });

    test("a failing file is named, rolled back whole, and earlier files stay", async (t) => {
      const db = await open(t);
      if (!db) return;
      const { sql } = db;
      forget(t, sql, "failure", ["mig_kept", "mig_partial", "mig_later"]);
      const dir = await writeMigrations(t, {
        "0001_kept.sql": "CREATE TABLE mig_kept (id int);",
        "0002_breaks.sql":
          "CREATE TABLE mig_partial (id int);\nINSERT INTO mig_partial VALUES (1);\nSELECT 1 / 0;",
        "0003_later.sql": "CREATE TABLE mig_later (id int);",
      });

      await assert.rejects(runMigrations(sql, { dir, namespace: "failure" }), (error: Error) => {
        assert.match(error.message, /0002_breaks\.sql/);
        assert.match(error.message, /division by zero/);
        assert.equal((error.cause as { code?: string }).code, "22012");
        return true;
      });
      assert.deepEqual(await ledger(sql, "failure"), ["0001_kept.sql"]);
      assert.equal(await tableExists(sql, "mig_kept"), true);
      assert.equal(await tableExists(sql, "mig_partial"), false);
      assert.equal(await tableExists(sql, "mig_later"), false);

      await writeFile(join(dir, "0002_breaks.sql"), "CREATE TABLE mig_partial (id int);");
      assert.deepEqual(await runMigrations(sql, { dir, namespace: "failure" }), [
        "0002_breaks.sql",
        "0003_later.sql",
      ]);
    });

    test("a misnamed file or a missing directory is refused before anything runs", async (t) => {
      const db = await open(t);
      if (!db) return;
      const { sql } = db;
      forget(t, sql, "misnamed", ["mig_misnamed"]);
      const dir = await writeMigrations(t, {
        "0001_ok.sql": "CREATE TABLE mig_misnamed (id int);",
        "2_short.sql": "SELECT 1;",
      });
      await assert.rejects(
        runMigrations(sql, { dir, namespace: "misnamed" }),
        /2_short\.sql is not named NNNN_name\.sql/,
      );
      assert.equal(await tableExists(sql, "mig_misnamed"), false);
      await assert.rejects(
        runMigrations(sql, { dir: join(dir, "absent"), namespace: "misnamed" }),
        { code: "ENOENT" },
      );
    });

    test("migrateAtBoot skips with a log line when AUTO_MIGRATE is false", async (t) => {
      const db = await open(t);
      if (!db) return;
      const { sql } = db;
      forget(t, sql, "boot", ["mig_boot"]);
      const dir = await writeMigrations(t, { "0001_boot.sql": "CREATE TABLE mig_boot (id int);" });
      const logger = captureLogger();

      const skipped = await migrateAtBoot({ sql, dir, namespace: "boot", enabled: false, logger });
      assert.deepEqual(skipped, []);
      assert.match(logger.lines.join("\n"), /AUTO_MIGRATE=false/);
      assert.deepEqual(await ledger(sql, "boot"), []);
      assert.equal(await tableExists(sql, "mig_boot"), false);

      const applied = await migrateAtBoot({ sql, dir, namespace: "boot", enabled: true, logger });
      assert.deepEqual(applied, ["0001_boot.sql"]);
      assert.equal(await tableExists(sql, "mig_boot"), true);
    });
  });
}
