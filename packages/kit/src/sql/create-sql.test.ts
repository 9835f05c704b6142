import assert from "node:assert/strict";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { type AddressInfo, createServer } from "node:net";
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

/** A port nothing listens on: bound, read, released. */
async function deadPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

test("an unreachable database stops start-up with one line naming DATABASE_URL, no password", async () => {
  const port = await deadPort();
  await assert.rejects(
    createSql({
      databaseUrl: `postgres://app:hunter2-secret@127.0.0.1:${port}/atrium`,
      dataDir: "/nonexistent",
      name: "memory",
    }),
    (error: Error) => {
      assert.equal(
        error.message,
        `DATABASE_URL: PostgreSQL at 127.0.0.1:${port}/atrium cannot be reached (connect ECONNREFUSED 127.0.0.1:${port})`,
      );
      assert.ok(!error.message.includes("hunter2"));
      return true;
    },
  );
});
