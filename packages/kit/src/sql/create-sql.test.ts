import assert from "node:assert/strict";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { needsServer, postgresUrl } from "../testing/servers.js";
import { createSql } from "./create-sql.js";

test("createSql without a database URL keeps a file-backed PGlite under <dataDir>/<name>", async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), "atrium-sql-"));
  t.after(() => rm(dataDir, { recursive: true, force: true }));

  const first = await createSql({ dataDir, name: "memory" });
  assert.equal(first.dialect, "pglite");
  await first.query("CREATE TABLE kept (note text)");
  await first.query("INSERT INTO kept VALUES ($1)", ["survives a restart"]);
  await first.close();
  assert.deepEqual(await readdir(dataDir), ["memory"]);

  const reopened = await createSql({ dataDir, name: "memory" });
  t.after(() => reopened.close());
  const { rows } = await reopened.query("SELECT note FROM kept");
  assert.deepEqual(rows, [{ note: "survives a restart" }]);
});

test("createSql with a database URL uses PostgreSQL", async (t) => {
  if (!(await needsServer(t, "postgres"))) return;
  const sql = await createSql({
    databaseUrl: postgresUrl(),
    dataDir: "/nonexistent",
    name: "memory",
  });
  t.after(() => sql.close());
  assert.equal(sql.dialect, "postgres");
  await sql.ping();
});

test("createSql refuses a name that is not one plain directory", async () => {
  await assert.rejects(createSql({ dataDir: "/tmp", name: "../escape" }), /invalid database name/);
});
